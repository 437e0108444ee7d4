// profile --predict in words (views/profile.hpp, ProfileResult::predicted): where the times come from,
// the total with its expected error, the clock the times are at, the GEMMs and what-ifs the model
// could not predict, and the same as JSON fields. Internal to the report layer: profile_report.cpp,
// profile_html.cpp and what_if_text.cpp read it.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "views/profile.hpp"

namespace shapescope {

// "predicted by the performance model of ...: nothing measured; ..."
std::string predicted_numbers_line(const ProfileResult& r);
// "GEMM time per step: 31.2 ms predicted (15 of 15 GEMMs), expected error 4.1 % median, 19.0 % p95 (...)"
// without the comparison with the trace, which profile_report.cpp adds.
std::string predicted_total_head(const ProfileResult& r);
// The clock the predicted times are at (the model's), with what the trace recorded.
std::string predicted_clocks_note(const ProfileResult& r);
// The GEMM table's cells: "5.2 (35.0)" (median, p95 error in %), with ", outside" for a prediction
// outside its class's measured range; and the kernel the model assumed, "tile 128x256 (assumed)".
std::string predicted_error_cell(const ProfileEntry& e);
std::string predicted_kernel_cell(const ProfileEntry& e);
// "not predicted: GEMM (why)", with a grouped call's groups as a loop of GEMMs where they are predicted.
std::string not_predicted_line(const ProfileResult& r, const ProfileEntry& e);
// Lines after the table: GEMMs outside the measured range, and the fp8 casts the model does not price.
std::vector<std::string> predicted_lines(const ProfileResult& r);
// Every kind of what-if the model cannot price, one line each, with the GEMMs it would change and why.
std::vector<std::string> not_predicted_lines(const ProfileResult& r);

// JSON: the document's `prediction` (record Prediction), a GEMM's `prediction` (PredictedTime; null
// where none), and the what-ifs not predicted (record NotPredicted).
nlohmann::ordered_json profile_prediction_json(const ProfileResult& r);
nlohmann::ordered_json entry_prediction_json(const ProfileEntry& e);
nlohmann::ordered_json not_predicted_json(const ProfileResult& r);

}  // namespace shapescope
