// The pieces pad's two reports share (pad_report.cpp: a model's dimensions; pad_sizes_report.cpp: a
// trace's or GEMM list's sizes), and the words of pad --predict. Internal to the report layer.
#pragma once
#include <cstddef>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/table.hpp"
#include "views/pad.hpp"
#include "views/pad_sizes.hpp"

namespace shapescope::pad_text {

using Json = nlohmann::ordered_json;

// The pad tables: text columns left, numbers right (report/table.hpp).
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // `fit`: how it narrows to the terminal, by the header's names (report/table.hpp).
  void print(std::ostream& out, const std::set<size_t>& left,
             const std::vector<std::pair<std::string, ColumnFit>>& fit = {}) const {
    std::vector<bool> right(rows_.front().size(), true);
    for (size_t i : left) right[i] = false;
    write_table(out, rows_, right, "", fit.empty() ? std::vector<ColumnFit>() : fit_by_name(rows_.front(), fit));
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

// Whether a result has times (a dry run has none), and whether a performance model predicted them.
struct Times {
  bool known = false;
  bool predicted = false;
  explicit operator bool() const { return known; }
};
Times times_of(const PadResult& result);
Times times_of(const SizePadResult& result);
// The document's mode: "measured", "predicted" or "dry-run".
const char* mode_name(Times times);
// The time columns' headers: "median [us]" / "predicted [us]", "noise [%]" / "error [%]".
const char* time_header(Times times);
const char* noise_header(Times times);

// Why a choice has no candidate. `probe` is the annotation of its probe GEMM (measured or predicted),
// nullopt before measuring, or where the model does not predict it (`times.predicted`).
std::string no_candidate_note(const ChoiceInfo& c, const std::optional<Annotation>& probe, Times times);
// The recommendation when it is not to pad: no candidate, none timed, or none saving enough; nullopt
// when `best` is a candidate to pad to.
std::optional<std::string> not_padded_text(const std::string& head, const std::vector<Evaluation>& ev,
                                           const std::optional<size_t>& best, const std::string& note, Times times);

Json optional_number(const std::optional<double>& v);
// A candidate's saving as JSON fields.
void add_saving_json(Json& x, const std::optional<StepTime>& before, const Evaluation& e);
// Where the times come from, as JSON fields (PadNumbers).
Json source_json(const PadRequest& o, const PadMeasurement& m);

// pad --predict: the line that says where the times come from, and one line per GEMM of `gemms` the
// model cannot predict or predicts outside its measured range.
void print_prediction(std::ostream& out, const PadPrediction& p, const std::vector<Problem>& gemms);
// A GEMM's prediction as JSON fields (PredictedTime), null where the model has none.
Json gemm_prediction_json(const PadPrediction& p, const Problem& problem);

}  // namespace shapescope::pad_text
