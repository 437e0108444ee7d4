// Writing an explanation: the verdict first, then the evidence, the effects ranked by cost, the
// neighbours and the fix (text); the same content as fields (--json).
#pragma once
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "model/explain.hpp"
#include "core/records.hpp"

namespace shapescope {

struct ExplainReport {
  std::string shape;                 // as the user gave it
  std::string mode;                  // "measured", "store", "model"
  std::string source;                // one line: where the numbers come from
  std::vector<ExplainPoint> points;  // [0] is the target
  std::vector<std::optional<StoredPoint>> stored;  // the measured point behind each (none for predictions)
  std::vector<std::string> missing;  // neighbours without a measurement, "1800 (multiple of 8 above): why"
  Explanation explanation;
};

void write_explain_text(std::ostream& out, const ExplainReport& report);
void write_explain_json(std::ostream& out, const ExplainReport& report);

}  // namespace shapescope
