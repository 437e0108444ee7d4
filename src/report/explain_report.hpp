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
void write_explain_json(std::ostream& out, const ExplainReport& report);

}  // namespace shapescope
