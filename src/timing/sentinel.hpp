// The sentinel's verdict on a chunk (MEASURE.md step 6), pure C++ so that CPU tests can feed it
// sequences of chunk medians. A fixed shape is measured in every chunk; its median in a chunk is
// compared with the reference, the median of the last accepted chunks' sentinels (so that a slow
// drift moves the reference):
//   - within max(drift_limit, 3 x the reference's relative IQR): the chunk is accepted;
//   - beyond it: the chunk is measured again (a transient disturbance: another process, a clock
//     dip); when the re-run reads the reference again, it is accepted;
//   - when a re-run agrees with the chunk's previous measurement instead, the shift persisted (the
//     clocks settled, or a load that stays): the chunk is kept, flagged, and the reference moves to
//     it, so that one step costs one re-run rather than every later chunk's;
//   - out of re-runs with measurements that disagree: kept and flagged, the reference unchanged.
#pragma once
#include <cstddef>
#include <optional>
#include <vector>

namespace shapescope {

class SentinelReference {
 public:
  SentinelReference(double drift_limit, int max_reruns) : drift_limit_(drift_limit), max_reruns_(max_reruns) {}

  enum class Action { kAccept, kMeasureAgain, kKeepDrifted };
  struct Verdict {
    Action action = Action::kAccept;
    std::optional<double> reference;  // what the median was compared with (none: it sets it)
    double drift = 0;                 // median / reference - 1
    double limit = 0;
    bool rebased = false;             // the reference moved to this chunk (a persistent shift)
  };
  // The chunk's sentinel median and relative IQR at its `attempt`-th measurement (0: the first);
  // `previous`: its median at the attempt before. Updates the reference when the chunk is kept.
  Verdict judge(double median, double noise, int attempt, std::optional<double> previous);

 private:
  void keep(double median, double noise);
  double drift_limit_;
  int max_reruns_;
  std::vector<double> medians_, noises_;  // accepted chunks, in order
};

// Chunks the reference is the median of.
constexpr size_t kSentinelReferenceChunks = 3;

}  // namespace shapescope
