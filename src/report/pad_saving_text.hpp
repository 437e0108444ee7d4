// The words and cells of pad's savings, paired or not (pad_report.cpp writes the rest): the measured
// columns of a candidate, the interval of a paired saving, the decision when it does not pad, the
// paired runs' lines.
#pragma once
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "model/pad.hpp"
#include "views/pad.hpp"

namespace shapescope {

// Whether any candidate's saving is paired (the table then gives intervals where the noise was).
bool any_paired(const std::vector<std::vector<Evaluation>>& evaluations);
// The measured columns' headers.
// Predicted (pad --predict): the model's error where the noise was.
std::vector<std::string> saving_headers(bool paired, bool predicted = false);
// "+2.81..+3.40 (24)": a paired saving's 95 % interval, in % of the step's GEMM time, and its pairs.
std::string interval_text(const Evaluation& e);
// A candidate's measured columns: before, after, saving (us and %), noise or, paired, the interval.
void add_saving_cells(std::vector<std::string>& row, const std::optional<StepTime>& before, const Evaluation& e,
                      bool paired_table);
// "saves 3.1 %" / "costs 0.4 %".
std::string saving_words(const Evaluation& e);
// "saves 3.1 % (95 % interval +2.8 to +3.4 %, 24 pairs)".
std::string paired_saving_text(const Evaluation& e);
// Paired, not padding: cannot tell (an interval straddles kMinGain), or leave it.
std::string paired_leave_text(const std::string& head, const std::vector<Evaluation>& ev, const Evaluation& most);
// "pad", "leave", or (paired) "cannot tell".
std::string action_of(const std::vector<Evaluation>& ev, const std::optional<size_t>& best);
// One line per paired run, and the candidates left unpaired; nothing when not paired.
void print_paired(std::ostream& out, const PadMeasurement& m);
// "SM clock 1890 MHz (median), 3 of 27 GEMMs throttled (...)".
std::string clock_summary(const PadMeasurement& m);
// The copy bandwidth the tokens' copy is priced at, GB/s (0: not calibrated).
double copy_gbs(const PadMeasurement& m);
// "measured on NVIDIA H200 (GPU-...), driver ..., cuBLAS ...: 27 GEMMs measured now, ...".
std::string source_text(const PadRequest& o, const PadMeasurement& m);
// What the recommendation's head says counts as a saving.
std::string recommendation_head(bool paired, bool predicted = false);

}  // namespace shapescope
