#include "model/trace_clocks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "common/order_stats.hpp"
#include "model/input_file.hpp"
#include "model/trace_json.hpp"

namespace shapescope {

namespace {

using Json = nlohmann::json;
using namespace trace_json;

constexpr const char* kColumns[] = {"t_us", "sm_clock_mhz", "power_w", "gpu_util_pct"};
// What a sample may hold and still be a reading of a GPU (anything else is a broken file).
constexpr double kMostMhz = 10000, kMostWatts = 100000;

struct Sample {
  double t_us = 0, sm_mhz = 0;
  std::optional<double> power_w;
};

// A well-formed sample: [t_us, sm_clock_mhz, power_w or null, gpu_util_pct or null] (the last two may
// be missing), a positive clock, a power and a utilization in range where given.
std::optional<Sample> sample_of(const Json& row) {
  if (!row.is_array() || row.size() < 2 || row.size() > 4 || !row[0].is_number() || !row[1].is_number())
    return std::nullopt;
  Sample s{row[0].get<double>(), row[1].get<double>(), std::nullopt};
  if (!(s.sm_mhz > 0 && s.sm_mhz <= kMostMhz)) return std::nullopt;
  if (row.size() >= 3 && !row[2].is_null()) {
    if (!row[2].is_number()) return std::nullopt;
    s.power_w = row[2].get<double>();
    if (!(*s.power_w >= 0 && *s.power_w <= kMostWatts)) return std::nullopt;
  }
  if (row.size() == 4 && !row[3].is_null()) {
    if (!row[3].is_number()) return std::nullopt;
    const double util = row[3].get<double>();
    if (!(util >= 0 && util <= 100)) return std::nullopt;
  }
  return s;
}

// Why the key cannot be read at all; "" when it can.
std::string unusable(const Json& clocks) {
  if (!clocks.is_object()) return "is not an object";
  const std::optional<double> version = number_of(clocks, "version");
  if (!version || *version != kClocksVersion)
    return fmt::format("has version {} where this shapescope reads {}", short_dump(clocks.value("version", Json())),
                       kClocksVersion);
  if (clocks.contains("columns")) {
    const Json expected = Json(std::vector<std::string>(std::begin(kColumns), std::end(kColumns)));
    if (clocks["columns"] != expected)
      return fmt::format("has columns {} where this shapescope reads {}", short_dump(clocks["columns"]), expected.dump());
  }
  if (!clocks.contains("samples") || !clocks["samples"].is_array()) return "has no \"samples\" array";
  return "";
}

// When the GPU ran the trace's kernels: their [ts, ts + dur] merged, in time order.
std::vector<std::pair<double, double>> kernel_spans(const Json& trace) {
  const Json* events = nullptr;
  if (trace.is_object() && trace.contains("traceEvents") && trace["traceEvents"].is_array())
    events = &trace["traceEvents"];
  else if (trace.is_array())
    events = &trace;
  std::vector<std::pair<double, double>> spans;
  if (events == nullptr) return spans;
  for (const Json& e : *events) {
    if (!e.is_object() || text_of(e, "ph") != "X") continue;
    const std::string cat = text_of(e, "cat");
    const std::optional<double> ts = number_of(e, "ts"), dur = number_of(e, "dur");
    if ((cat == "kernel" || cat == "Kernel") && ts && dur && *dur >= 0) spans.emplace_back(*ts, *ts + *dur);
  }
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<double, double>> merged;
  for (const auto& span : spans) {
    if (!merged.empty() && span.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, span.second);
    else
      merged.push_back(span);
  }
  return merged;
}

// Whether a kernel ran within `window_us` before t (or at t).
bool busy_at(const std::vector<std::pair<double, double>>& spans, double t, double window_us) {
  const auto it = std::lower_bound(spans.begin(), spans.end(), t - window_us,
                                   [](const std::pair<double, double>& span, double from) { return span.second < from; });
  return it != spans.end() && it->first <= t;
}

// The sampling window: the median gap between samples (what the sampler achieved), else the period
// it asked for.
double window_us(const std::vector<Sample>& samples, double interval_ms) {
  if (samples.size() < 2) return interval_ms * 1000;
  std::vector<double> gaps;
  for (size_t i = 1; i < samples.size(); ++i) gaps.push_back(samples[i].t_us - samples[i - 1].t_us);
  return median_of(gaps);
}

void summarize(RecordedClocks& c, const std::vector<Sample>& counted) {
  std::vector<double> mhz, watts;
  for (const Sample& s : counted) {
    mhz.push_back(s.sm_mhz);
    if (s.power_w) watts.push_back(*s.power_w);
  }
  c.busy_samples = int64_t(counted.size());
  c.sm_clock_median_mhz = median_of(mhz);
  c.sm_clock_low_mhz = *std::min_element(mhz.begin(), mhz.end());
  c.sm_clock_high_mhz = *std::max_element(mhz.begin(), mhz.end());
  if (!watts.empty()) {
    c.power_median_w = median_of(watts);
    c.power_max_w = *std::max_element(watts.begin(), watts.end());
  }
}

// The GPU's identity and limits as the recording wrote them; a limit out of range is not kept.
RecordedClocks identity_of(const Json& clocks) {
  RecordedClocks c;
  c.device = text_of(clocks, "device");
  c.uuid = text_of(clocks, "uuid");
  if (const auto interval = number_of(clocks, "interval_ms"); interval && *interval > 0 && *interval <= 60000)
    c.interval_ms = *interval;
  if (const auto mhz = number_of(clocks, "max_sm_clock_mhz"); mhz && *mhz > 0 && *mhz <= kMostMhz)
    c.max_sm_clock_mhz = *mhz;
  if (const auto watts = number_of(clocks, "power_limit_w"); watts && *watts > 0 && *watts <= kMostWatts)
    c.power_limit_w = *watts;
  return c;
}

}  // namespace

std::optional<RecordedClocks> read_recorded_clocks(const Json& trace, std::vector<std::string>& notes) {
  if (!trace.is_object() || !trace.contains(kClocksKey)) return std::nullopt;
  const Json& clocks = trace[kClocksKey];
  if (const std::string why = unusable(clocks); !why.empty()) {
    notes.push_back(fmt::format("\"{}\" {}: the recorded clocks are left out", kClocksKey, why));
    return std::nullopt;
  }
  std::vector<Sample> samples;
  size_t malformed = 0;
  const Json* first_bad = nullptr;
  for (const Json& row : clocks["samples"]) {
    if (const std::optional<Sample> s = sample_of(row)) {
      samples.push_back(*s);
    } else if (malformed++ == 0) {
      first_bad = &row;
    }
  }
  if (samples.empty()) {
    notes.push_back(fmt::format("\"{}\" holds no well-formed sample ({} in all): the recorded clocks are left out",
                                kClocksKey, clocks["samples"].size()));
    return std::nullopt;
  }
  if (malformed > 0)
    notes.push_back(fmt::format("{} of the {} samples of \"{}\" are not [t_us, sm_clock_mhz, power_w, gpu_util_pct] "
                                "with a positive clock (the first: {}): left out",
                                malformed, clocks["samples"].size(), kClocksKey, short_dump(*first_bad)));
  std::stable_sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) { return a.t_us < b.t_us; });
  RecordedClocks c = identity_of(clocks);
  c.samples = int64_t(samples.size());
  const std::vector<std::pair<double, double>> spans = kernel_spans(trace);
  const double window = window_us(samples, c.interval_ms);
  std::vector<Sample> busy;
  for (const Sample& s : samples)
    if (busy_at(spans, s.t_us, window)) busy.push_back(s);
  if (busy.empty()) {
    notes.push_back(fmt::format("none of the {} samples of \"{}\" was taken while the trace's kernels ran: the recorded "
                                "clock is over all of them",
                                samples.size(), kClocksKey));
    busy = samples;
  }
  summarize(c, busy);
  return c;
}

}  // namespace shapescope
