#include "timing/sentinel.hpp"

#include <algorithm>
#include <cmath>

#include "timing/stats.hpp"

namespace shapescope {

namespace {

constexpr double kNoiseMultiple = 3;

}  // namespace

void SentinelReference::keep(double median, double noise) {
  medians_.push_back(median);
  noises_.push_back(noise);
}

SentinelReference::Verdict SentinelReference::judge(double median, double noise, int attempt,
                                                    std::optional<double> previous) {
  Verdict v;
  if (medians_.empty()) {  // the first chunk finished sets the reference
    keep(median, noise);
    return v;
  }
  const size_t from = medians_.size() - std::min(medians_.size(), kSentinelReferenceChunks);
  const double reference = shapescope::median(std::vector<double>(medians_.begin() + long(from), medians_.end()));
  const double spread = shapescope::median(std::vector<double>(noises_.begin() + long(from), noises_.end()));
  v.reference = reference;
  v.drift = median / reference - 1.0;
  v.limit = std::max(drift_limit_, kNoiseMultiple * spread);
  if (std::fabs(v.drift) <= v.limit) {
    keep(median, noise);
    return v;
  }
  const bool persistent = attempt > 0 && previous && std::fabs(median / *previous - 1.0) <= v.limit;
  if (!persistent && attempt < max_reruns_) {
    v.action = Action::kMeasureAgain;
    return v;
  }
  v.action = Action::kKeepDrifted;
  if (persistent) {
    medians_ = {median};
    noises_ = {noise};
    v.rebased = true;
  }
  return v;
}

}  // namespace shapescope
