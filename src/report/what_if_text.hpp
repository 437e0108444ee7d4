// profile's what-ifs in words (views/what_ifs.hpp): the text report, the JSON and the HTML page read
// the same sentences and cells from here.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "views/profile.hpp"

namespace shapescope {

// What a what-if changes: the GEMM and its fix (with what it adds: a copy, casts), or the loop a
// grouped call becomes.
std::string what_if_change(const ProfileResult& r, const WhatIf& w);
// "1.23 ms (4.5 %) [1.10 ms..1.36 ms]"; predicted: "1.23 ms (4.5 %), error 5.2 %"
std::string what_if_saving(const WhatIf& w, double step_us);

// One list, worded: its heading, its table (header first), the line of all its changes measured at
// once, and nothing (an empty heading) when the list is empty.
struct WhatIfListText {
  std::string heading;
  std::vector<std::vector<std::string>> table;
  std::optional<std::string> all;
};
WhatIfListText same_dtype_text(const ProfileResult& r, const WhatIfs& w);
WhatIfListText precision_text(const ProfileResult& r, const WhatIfs& w);
// Why no what-if is listed: none measured (or predicted) saves enough.
std::string no_what_if_text(const ProfileResult& r);
// The paired run the candidates were measured in; the changed steps asked for alone (--what-if N); the
// candidates that could not be measured. One line each.
std::vector<std::string> what_if_lines(const ProfileResult& r, const WhatIfs& w);
// A changed step in one line: "every same-dtype change at once, measured as a step (...): 12.3 ms -> ..."
std::string changed_step_line(const ProfileResult& r, const ChangedStep& s);

}  // namespace shapescope
