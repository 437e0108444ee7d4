// Writing an explanation: the verdict first, then the evidence, the effects ranked by cost, the
// neighbours and the fix (text); the same content as fields (--json).
#pragma once
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "views/explain.hpp"

namespace shapescope {

void write_explain_text(std::ostream& out, const ExplainReport& report);
// The first line (the answer, within 100 columns) and the best fix, for one-line listings.
std::string explain_verdict_line(const ExplainReport& report);
std::string explain_fix_line(const ExplainReport& report);
// The report's fix number `fix` in the words of its "fix:" line.
std::string explain_fix_text(const ExplainReport& report, size_t fix);
// explain_json.cpp: the same content as fields (--json).
void write_explain_json(std::ostream& out, const ExplainReport& report);
// Pieces of the text the JSON carries too: an effect's detail, the paired passes' line.
std::string explain_effect_detail(const ExplainReport& report, const Effect& effect);
std::string explain_paired_line(const ExplainReport& report);

}  // namespace shapescope
