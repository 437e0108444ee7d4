// What would make this step faster: `profile`'s ranked what-ifs. Each is a change to the program
// that a measurement supports (one of explain's fixes for a GEMM, each measured in explain's paired
// passes; or a grouped call run as the loop of its groups where that is faster), with the GEMMs
// it touches and its saving per step: the row's calls per step x its time x (1 - the fix's paired
// ratio to the GEMM), with the interval of that ratio. The changes are ranked by that saving, and
// the step's GEMM time "with all of them" takes each GEMM's best change (they touch distinct GEMMs,
// so these add up). Plain arithmetic over profile's result; report/profile_report.hpp words it.
#pragma once
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace shapescope {

struct ProfileResult;

enum class WhatIfKind { kPrecision, kPadding, kSize, kLayout, kAlgorithm, kGrouping, kBatching };
std::string_view what_if_name(WhatIfKind kind);  // "precision", "padding", ...

struct WhatIf {
  WhatIfKind kind = WhatIfKind::kPadding;
  size_t entry = 0;              // the profile entry (a distinct GEMM) it changes
  std::optional<size_t> fix;     // the entry's explanation's fix; none for grouping
  double calls_per_step = 0;
  double now_us = 0, after_us = 0;  // per call: the row's time, and what the change makes it
  double saving_us = 0;             // per step
  std::optional<double> saving_low_us, saving_high_us;  // per step: the paired ratio's 95 % interval
  bool paired() const { return saving_low_us.has_value(); }
};

struct WhatIfs {
  std::vector<WhatIf> ranked;   // largest saving per step first, one per GEMM and kind (the best of
                                // explain's fixes of that kind); only savings whose interval (or,
                                // unpaired, whose median) clears the 2 % minimum effect
  double step_us = 0;           // the step's measured GEMM time
  double with_all_us = 0;       // the same with each GEMM's best change (grouping aside: a grouped
                                // row's time already is the faster way's)
  size_t not_paired = 0;        // what-ifs from points measured one by one (no interval)
};

WhatIfs what_ifs(const ProfileResult& result);

}  // namespace shapescope
