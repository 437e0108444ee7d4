#include "core/states.hpp"

#include "core/records.hpp"

namespace shapescope {

std::string_view to_string(ClockState state) {
  switch (state) {
    case ClockState::kUnrecorded: return "unrecorded";
    case ClockState::kSustained: return "sustained";
    case ClockState::kBurst: return "burst";
  }
  return "";
}

std::optional<ClockState> parse_clock_state(std::string_view text) {
  for (ClockState s : {ClockState::kUnrecorded, ClockState::kSustained, ClockState::kBurst})
    if (text == to_string(s)) return s;
  return std::nullopt;
}

std::string_view to_string(StopReason reason) {
  switch (reason) {
    case StopReason::kUnrecorded: return "unrecorded";
    case StopReason::kFixed: return "fixed";
    case StopReason::kConverged: return "converged";
    case StopReason::kCap: return "cap";
  }
  return "";
}

std::optional<StopReason> parse_stop_reason(std::string_view text) {
  for (StopReason r : {StopReason::kUnrecorded, StopReason::kFixed, StopReason::kConverged, StopReason::kCap})
    if (text == to_string(r)) return r;
  return std::nullopt;
}

bool same_clock_state(const PointKey& a, const PointKey& b) { return a.clocks == b.clocks; }

std::vector<StoredPoint> with_clock_state(const std::vector<StoredPoint>& points, ClockState state) {
  std::vector<StoredPoint> out;
  for (const StoredPoint& p : points)
    if (p.key.clocks == state) out.push_back(p);
  return out;
}

}  // namespace shapescope
