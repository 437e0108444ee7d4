#include "timing/paired.hpp"

#include <algorithm>
#include <numeric>
#include <random>

#include "timing/stats.hpp"
#include "timing/stopping.hpp"

namespace shapescope {

PairedRatio paired_ratio(std::vector<double> ratios) {
  PairedRatio r;
  r.pairs = ratios.size();
  if (ratios.empty()) return r;
  r.median = median(ratios);
  const MedianInterval interval = median_interval(std::move(ratios));
  r.low = interval.low;
  r.high = interval.high;
  r.coverage = interval.coverage;
  return r;
}

std::vector<size_t> pass_sequence(const std::vector<size_t>& order) {
  std::vector<size_t> sequence = {0};
  for (size_t c : order) sequence.insert(sequence.end(), {c, 0});
  for (auto c = order.rbegin(); c != order.rend(); ++c) sequence.insert(sequence.end(), {*c, 0});
  return sequence;
}

namespace {

// Per call of a pass: the values added up and counted; a call with an unusable value has no mean.
struct PerCall {
  std::vector<double> sum;
  std::vector<int> count;
  std::vector<bool> broken;
  explicit PerCall(size_t calls) : sum(calls, 0), count(calls, 0), broken(calls, false) {}
  void add(size_t c, double value, bool usable) {
    if (!usable) broken[c] = true;
    sum[c] += value;
    ++count[c];
  }
  std::vector<std::optional<double>> means() const {
    std::vector<std::optional<double>> out(sum.size());
    for (size_t c = 0; c < sum.size(); ++c)
      if (count[c] > 0 && !broken[c]) out[c] = sum[c] / count[c];
    return out;
  }
};

}  // namespace

std::vector<std::optional<double>> pass_ratios(const std::vector<size_t>& sequence, const std::vector<double>& us,
                                               size_t calls) {
  if (sequence.size() != us.size()) return std::vector<std::optional<double>>(calls);
  PerCall ratios(calls);
  for (size_t s = 1; s + 1 < sequence.size(); ++s) {
    const size_t c = sequence[s];
    if (c == 0 || c >= calls) continue;
    const double reference = (us[s - 1] + us[s + 1]) / 2;
    const bool usable = sequence[s - 1] == 0 && sequence[s + 1] == 0 && reference > 0 && us[s] > 0;
    ratios.add(c, usable ? us[s] / reference : 0, usable);
  }
  std::vector<std::optional<double>> out = ratios.means();
  if (calls > 0) out[0] = 1.0;
  return out;
}

namespace {

// The limits every rule shares: nullopt when they decide nothing yet.
std::optional<bool> limits_done(const std::vector<std::vector<double>>& series, size_t first, const PairedRule& rule,
                                double seconds) {
  size_t pairs = series.size() > first ? series[first].size() : 0;
  for (size_t i = first; i < series.size(); ++i) pairs = std::min(pairs, series[i].size());
  if (int(pairs) >= rule.max_pairs) return true;
  if (seconds >= rule.max_seconds && int(pairs) >= rule.min_pairs) return true;
  if (seconds >= kHardLimit * rule.max_seconds && int(pairs) >= kMinAdaptiveSamples) return true;
  if (int(pairs) < rule.min_pairs) return false;
  return std::nullopt;
}

}  // namespace

bool paired_done(const std::vector<std::vector<double>>& ratios, const PairedRule& rule, double seconds) {
  if (const auto decided = limits_done(ratios, 1, rule, seconds)) return *decided;
  for (size_t i = 1; i < ratios.size(); ++i) {
    const PairedRatio r = paired_ratio(ratios[i]);
    // Narrow enough, or already clear of the minimum effect on one side: more pairs change nothing.
    const PairedVerdict v = judge(r, rule.min_effect);
    const bool decided = rule.stop_on_verdict && (v == PairedVerdict::kFaster || v == PairedVerdict::kSlower);
    if (r.relative_half_width() > rule.target && !decided) return false;
  }
  return true;
}

bool sums_done(const std::vector<std::vector<double>>& sums, const PairedRule& rule, double seconds) {
  if (const auto decided = limits_done(sums, 0, rule, seconds)) return *decided;
  for (const auto& s : sums)
    if (paired_ratio(s).relative_half_width() > rule.target) return false;
  return true;
}

std::vector<std::optional<double>> pass_means(const std::vector<size_t>& sequence, const std::vector<double>& us,
                                              size_t calls) {
  if (sequence.size() != us.size()) return std::vector<std::optional<double>>(calls);
  PerCall times(calls);
  for (size_t s = 0; s < sequence.size(); ++s)
    if (sequence[s] < calls) times.add(sequence[s], us[s], us[s] > 0);
  return times.means();
}

std::optional<double> sum_ratio(const SumRatio& sum, const std::vector<std::optional<double>>& means) {
  auto total = [&](const std::vector<std::pair<size_t, double>>& terms, double constant) -> std::optional<double> {
    double t = constant;
    for (const auto& [call, count] : terms) {
      if (call >= means.size() || !means[call]) return std::nullopt;
      t += count * *means[call];
    }
    return t;
  };
  const std::optional<double> num = total(sum.numerator, sum.numerator_us);
  const std::optional<double> den = total(sum.denominator, sum.denominator_us);
  if (!num || !den || *num <= 0 || *den <= 0) return std::nullopt;
  return *num / *den;
}

std::vector<size_t> pass_order(size_t calls, unsigned long long seed) {
  std::vector<size_t> order(calls > 0 ? calls - 1 : 0);
  std::iota(order.begin(), order.end(), size_t(1));
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

}  // namespace shapescope
