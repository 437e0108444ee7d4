// How a point was measured, beyond its shape and backend: the clock state the GPU was held in
// (part of the point's key: a burst and a sustained measurement of one shape are two points) and why
// its sampling stopped. One place for the names that the store, the options and the views share.
// The predicates the views compare points with are in core/records.hpp.
#pragma once
#include <optional>
#include <string_view>

namespace shapescope {

// The clock state of a measurement (MEASURE.md, "Added after the H100 measurements"):
//   sustained: passes back to back after a warm-up, the GPU under continuous load (at its power
//              limit when the kernels are large enough): what a training step sees;
//   burst:     short bursts of work with idle cool-downs between them, so that kernels run at
//              boost clocks: the best a kernel can do;
//   unrecorded: measured before shapescope recorded clock states (schema 1 stores).
enum class ClockState { kUnrecorded, kSustained, kBurst };

// "unrecorded", "sustained", "burst": the store's clock_state column and the --clocks values.
std::string_view to_string(ClockState state);
// The state a --clocks value or a store cell names; nullopt for anything else (--clocks refuses
// "unrecorded": it names old points, not a way to measure).
std::optional<ClockState> parse_clock_state(std::string_view text);

// Why a point's sampling stopped:
//   fixed:     --samples N asked for exactly N samples;
//   converged: the median's confidence interval became narrower than --target-noise;
//   cap:       --max-samples was reached first (the point is kept; its interval is stored);
//   unrecorded: measured before stopping reasons were recorded (schema 1 stores).
enum class StopReason { kUnrecorded, kFixed, kConverged, kCap };
std::string_view to_string(StopReason reason);
std::optional<StopReason> parse_stop_reason(std::string_view text);

}  // namespace shapescope
