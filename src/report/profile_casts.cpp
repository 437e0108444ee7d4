#include "report/profile_casts.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/units.hpp"

namespace shapescope {
namespace {

using Json = nlohmann::ordered_json;

bool has_fp8_gemm(const ProfileResult& r) {
  return std::any_of(r.entries.begin(), r.entries.end(),
                     [](const ProfileEntry& e) { return e.row.in_total && e.row.problem.dtype == DType::kFp8; });
}

bool found(const TraceCasts& c) { return c.found_by != CastsFoundBy::kNone && c.kernels > 0; }

// A count per step: whole when it is.
std::string count_text(double n) { return n == double(int64_t(n)) ? std::to_string(int64_t(n)) : fixed(n, 1); }

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::optional<std::string> found_line(const ProfileResult& r, const StepCastsCompared& s) {
  const TraceCasts& c = *r.workload.casts;
  const std::string head = "fp8 casts as the step ran them: ";
  if (c.found_by == CastsFoundBy::kRange && c.kernels > 0)
    return head + fmt::format("{} per step, {} kernels per step launched inside the trace's '{}' ranges ({} per step)",
                              us_or_ms(s.trace_us), count_text(s.kernels), c.range, count_text(s.ranges));
  if (c.found_by == CastsFoundBy::kRange)
    return head + fmt::format("not found: the trace's {} '{}' ranges launched no GPU kernel (none is linked to an op "
                              "inside them); the step's casts are in no total here",
                              c.ranges, c.range);
  if (c.found_by == CastsFoundBy::kKernelNames)
    return head + fmt::format("{} per step, {} kernels per step found by name (Transformer Engine's {}; no '{}' range "
                              "in the trace)",
                              us_or_ms(s.trace_us), count_text(s.kernels), joined(c.kernel_names), c.range);
  if (!has_fp8_gemm(r)) return std::nullopt;
  return head + fmt::format("not found: no '{}' range in the trace (--cast-range names another) and no kernel named "
                            "as Transformer Engine's cast kernels; the step's casts are in no total here",
                            c.range);
}

std::optional<std::string> total_line(const ProfileResult& r, const StepCastsCompared& s) {
  if (!s.ratio) return std::nullopt;
  const ProfileTotals& t = r.totals;
  const size_t rows = t.measured_rows + t.missing_rows;
  const char* times = r.predicted ? "predicted" : "measured";
  return fmt::format("GEMMs + casts per step, the casts as the trace ran them: {} (the GEMMs {} here {} + the "
                     "trace's casts {}) against the trace's {} ({} + {}): {} / trace = {:.3f}{}",
                     us_or_ms(*s.gemms_and_casts_us), times, us_or_ms(t.compared_measured_us), us_or_ms(s.trace_us),
                     us_or_ms(*s.trace_gemms_and_casts_us), us_or_ms(t.compared_trace_us), us_or_ms(s.trace_us), times,
                     *s.ratio, t.compared_rows < rows ? fmt::format(" over the {} GEMMs both have", t.compared_rows) : "");
}

std::optional<std::string> what_if_line(const ProfileResult& r, const StepCastsCompared& s) {
  if (!found(*r.workload.casts) || !r.fp8_casts) return std::nullopt;
  const std::string head = "what-if, the casts as fused kernels (measured with shapescope's cast kernels: amax, scale "
                           "and cast of each operand): ";
  if (!s.saving_us)
    return head + fmt::format("not priced ({} of its {} casts measured)", r.fp8_casts->measured, r.fp8_casts->casts);
  if (*s.saving_us > 0)
    return head + fmt::format("{} less per step (the casts {} -> {})", us_or_ms(*s.saving_us), us_or_ms(s.trace_us),
                              us_or_ms(*s.ours_us));
  return head + fmt::format("no saving: they take {} per step, {} more than the trace's {}", us_or_ms(*s.ours_us),
                            us_or_ms(-*s.saving_us), us_or_ms(s.trace_us));
}

Json optional_json(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

}  // namespace

std::optional<StepCastsCompared> compare_step_casts(const ProfileResult& r) {
  if (!r.workload.casts) return std::nullopt;
  const TraceCasts& c = *r.workload.casts;
  StepCastsCompared s;
  s.steps = double(std::max<int64_t>(r.workload.steps, 1));
  s.trace_us = c.kernel_us / s.steps;
  s.kernels = double(c.kernels) / s.steps;
  s.ranges = double(c.ranges) / s.steps;
  if (!found(c)) return s;
  const ProfileTotals& t = r.totals;
  if (t.compared_rows > 0 && t.compared_trace_us + s.trace_us > 0) {
    s.gemms_and_casts_us = t.compared_measured_us + s.trace_us;
    s.trace_gemms_and_casts_us = t.compared_trace_us + s.trace_us;
    s.ratio = *s.gemms_and_casts_us / *s.trace_gemms_and_casts_us;
  }
  if (r.fp8_casts && r.fp8_casts->measured == r.fp8_casts->casts) {
    s.ours_us = r.fp8_casts->us_per_step;
    s.saving_us = s.trace_us - *s.ours_us;
  }
  return s;
}

std::vector<std::string> trace_casts_lines(const ProfileResult& r) {
  std::vector<std::string> lines;
  const std::optional<StepCastsCompared> s = compare_step_casts(r);
  if (!s) return lines;
  for (const std::optional<std::string>& line : {found_line(r, *s), total_line(r, *s), what_if_line(r, *s)})
    if (line) lines.push_back(*line);
  return lines;
}

nlohmann::ordered_json trace_casts_json(const ProfileResult& r) {
  const std::optional<StepCastsCompared> s = compare_step_casts(r);
  if (!s) return nullptr;
  const TraceCasts& c = *r.workload.casts;
  return {{"range", c.range},
          {"found_by", std::string(to_string(c.found_by))},
          {"ranges_per_step", s->ranges},
          {"kernels_per_step", s->kernels},
          {"us_per_step", found(c) ? Json(s->trace_us) : Json(nullptr)},
          {"kernel_names", c.kernel_names},
          {"gemms_and_casts_us", optional_json(s->gemms_and_casts_us)},
          {"trace_gemms_and_casts_us", optional_json(s->trace_gemms_and_casts_us)},
          {"ratio", optional_json(s->ratio)},
          {"ours_us", optional_json(s->ours_us)},
          {"fused_saving_us", optional_json(s->saving_us)},
          {"lines", trace_casts_lines(r)}};
}

}  // namespace shapescope
