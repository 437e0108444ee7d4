// explain's precision and fp8 text (report/explain_report.cpp and explain_json.cpp call it): the
// target in each precision with its fp8 casts and its errors on both kinds of inputs, a precision
// fix's line with what its casts cost, and an fp8 target's causes against its recipe's blocks.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "views/explain.hpp"

namespace shapescope {

// The precision table: a header row, then the target and each kPrecision point.
std::vector<std::vector<std::string>> explain_precision_rows(const ExplainReport& report);
// A precision fix's line: "run it in fp8 block: ..." with its casts and errors.
std::string explain_precision_fix_text(const ExplainReport& report, const Fix& fix);
// The fp8 causes and the --max-error note, one line each (none for most explanations).
std::vector<std::string> explain_fp8_lines(const ExplainReport& report);
// The same as fields: {"causes": [...], "over_max_error": N}.
nlohmann::ordered_json explain_fp8_json(const ExplainReport& report);
// A NumericalError as fields.
nlohmann::ordered_json numerical_error_json(const NumericalError& e);

}  // namespace shapescope
