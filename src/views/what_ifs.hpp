// What would make this step faster: `profile`'s what-ifs. Each is a change to the program that
// explain found for one GEMM (one of its fixes: a padding, a layout, an algorithm, a precision) or a
// grouped call run as the loop of its groups. A change runs something in place of each of the GEMM's
// calls (the changed GEMM and what it adds: a copy into aligned rows, a cast to fp8) and may add work
// once per step (a weight's cast): what it costs is in its price.
//
// All candidates of a step are measured in one paired run (views/paired_steps.hpp): the step's GEMMs
// and every candidate's, in the same passes, each candidate a ratio of the changed step's GEMM time to
// the step's, with its 95 % interval. A candidate's saving is that ratio applied to the step's GEMM
// time as profile measured it (replayed at the step's own clock, for a trace). Changes that keep the
// dtype (padding, size, layout, algorithm, grouping) are ranked apart from those that change it
// (precision), each list with its own total; each total is measured as a changed step (all of the
// list's best changes applied at once, replayed against the step), never a sum of separate savings.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/paired_ratio.hpp"
#include "views/paired_steps.hpp"

namespace shapescope {

struct ProfileResult;

enum class WhatIfKind { kPrecision, kPadding, kSize, kLayout, kAlgorithm, kGrouping, kBatching };
std::string_view what_if_name(WhatIfKind kind);  // "precision", "padding", ...
inline bool changes_dtype(WhatIfKind kind) { return kind == WhatIfKind::kPrecision; }

// One change to one GEMM, and its measurement.
struct WhatIfCandidate {
  WhatIfKind kind = WhatIfKind::kPadding;
  size_t entry = 0;           // the profile entry (a distinct GEMM) it changes
  std::optional<size_t> fix;  // the entry's explanation's fix; none for grouping
  StepCalls per_call;         // what runs in place of each call: the changed GEMM first, then what it adds
  StepCalls per_step;         // what it adds once per step
  // Measured: the changed step's GEMM time over the step's, both in the same passes; nullopt when it
  // was not (why_not). Grouping is not paired: its two ways' own measurements compare (unpaired).
  std::optional<PairedRatio> ratio;
  double unpaired_share = 1;  // grouping: the loop's time over the grouped call's
  std::string why_not;
  // Predicted (profile --predict): the changed GEMM's predicted time per call, the error its saving
  // must clear (the larger of the two predictions' held-out median errors), and whether the changed
  // GEMM lies outside its class's measured range.
  std::optional<double> predicted_us;
  double predicted_error = 0;
  bool predicted_outside = false;
  std::string change;  // the change in words where it is no explain fix (a predicted layout or precision)
};

// A ranked what-if: a candidate that saves time, in the step's terms.
struct WhatIf {
  size_t candidate = 0;             // into ProfileResult::candidates
  WhatIfKind kind = WhatIfKind::kPadding;
  size_t entry = 0;
  std::optional<size_t> fix;
  double calls_per_step = 0;
  double now_us = 0, after_us = 0;  // per call: the row's time, and what the change makes it (its costs included)
  double saving_us = 0;             // per step
  std::optional<double> saving_low_us, saving_high_us;  // per step: the paired ratio's 95 % interval
  bool paired() const { return saving_low_us.has_value(); }
  size_t number = 0;                // its candidate's number (1-based): --what-if N, the same in every run
                                    // on the same trace and store
  bool predicted = false;           // profile --predict: both times the model's
  double error = 0;                 // predicted: the error it cleared (WhatIfCandidate::predicted_error)
};

// The names of the two lists' changed steps.
constexpr const char* kEverySameDtypeChange = "every same-dtype change";
constexpr const char* kEveryPrecisionChange = "every precision change";

// A changed step: several what-ifs applied at once, measured against the step as a step.
struct ChangedStep {
  std::string name;                 // "every same-dtype change", "every precision change", "what-if 3"
  std::vector<size_t> candidates;   // the candidates it applies
  std::optional<PairedRatio> ratio; // its GEMM time (costs included) over the step's
  std::optional<double> before_us, after_us;  // per step, as measured with it
  bool replayed = false;            // measured in the step's replay (else in paired passes of its GEMMs)
  bool predicted = false;           // profile --predict: the model's sum (it prices no interaction)
  bool named = false;               // --what-if's: replayed, its move is measured to +-5 % where time allows
  std::vector<size_t> unlisted;     // --what-if numbers this run's lists do not show (their saving within
                                    // the least effect, or not measured): named in its line
  std::string why_not;
};

struct WhatIfList {
  std::vector<WhatIf> ranked;       // largest saving per step first; only savings whose interval (or,
                                    // unpaired, whose value) clears the 2 % minimum effect
  std::optional<size_t> all;        // the changed step of all of them (into ProfileResult::changed_steps)
};

struct WhatIfs {
  WhatIfList same_dtype, precision;
  double step_us = 0;               // the step's measured GEMM time
  size_t not_paired = 0;            // what-ifs without an interval
};

// The candidates of a profile's entries: per entry and kind, the fix of that kind that explain found
// fastest (its other fixes of the kind are the same change done worse), as the calls it runs; and
// the grouping what-if of a grouped call whose loop was faster. Plain arithmetic over the entries.
std::vector<WhatIfCandidate> what_if_candidates(const ProfileResult& result);

// The step's GEMMs as terms (each in-total entry with a time: its problem, the way its time was
// measured, its calls per step), and the step with candidates applied (one per entry at most).
StepCalls step_terms(const ProfileResult& result);
StepCalls changed_terms_of(const ProfileResult& result, const std::vector<size_t>& candidates);

// A changed step's ratio (its GEMM time over the step's) as the ratio of the GEMM it changes, which
// takes `share` of the step: 1 - (1 - ratio) / share, the interval likewise.
PairedRatio gemm_ratio(const PairedRatio& step, double share);

// The ranked lists, from the candidates' measurements (or predictions) and the step's time. A
// predicted candidate counts where it saves more of its GEMM than kMinPairedEffect and its error.
WhatIfs what_ifs(const ProfileResult& result);

// The changed steps to measure: each list's best change per GEMM at once, and the request's
// --what-if N[,M...] (candidates by number, listed or not; why_not where one is not a change to run).
std::vector<ChangedStep> plan_changed_steps(const ProfileResult& result);

}  // namespace shapescope
