#include "model/profile.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/backend_kind.hpp"

namespace shapescope {

BackendKind profile_backend(const Problem& p, BackendKind backend) {
  if (p.grouped()) return BackendKind::kCublasGrouped;
  if (p.dtype == DType::kFp8) return BackendKind::kCublasLt;
  return backend;
}

std::vector<ProfileRow> profile_rows(const Workload& w, BackendKind backend, bool fused_in_total) {
  std::vector<ProfileRow> rows;
  const double steps = double(std::max<int64_t>(w.steps, 1));
  for (size_t i = 0; i < w.gemms.size(); ++i) {
    const WorkloadGemm& g = w.gemms[i];
    ProfileRow r;
    r.gemm = i;
    r.problem = grouped_problem(g.problems);
    r.backend = profile_backend(r.problem, backend);
    r.calls_per_step = double(g.count) / steps;
    r.in_total = !g.usually_fused || fused_in_total;
    if (g.kernel_us) r.trace_step_us = *g.kernel_us / steps;
    rows.push_back(std::move(r));
  }
  return rows;
}

void rank_rows(std::vector<ProfileRow>& rows, const RowTimeOf& time_of) {
  double total = 0;
  for (ProfileRow& r : rows) {
    r.time = time_of(r);
    r.step_us.reset();
    r.share.reset();
    if (r.time) r.step_us = r.calls_per_step * r.time->median_us;
    if (r.step_us && r.in_total) total += *r.step_us;
  }
  for (ProfileRow& r : rows)
    if (r.step_us && r.in_total && total > 0) r.share = *r.step_us / total;
  const auto group = [](const ProfileRow& r) { return !r.step_us ? 2 : r.in_total ? 0 : 1; };
  std::stable_sort(rows.begin(), rows.end(), [&](const ProfileRow& a, const ProfileRow& b) {
    if (group(a) != group(b)) return group(a) < group(b);
    if (a.step_us && b.step_us && *a.step_us != *b.step_us) return *a.step_us > *b.step_us;
    return a.gemm < b.gemm;
  });
}

ProfileTotals profile_totals(const Workload& w, const std::vector<ProfileRow>& rows) {
  ProfileTotals t;
  for (const ProfileRow& r : rows) {
    if (!r.in_total) {
      ++t.outside_rows;
      continue;
    }
    t.calls += w.gemms[r.gemm].count;
    if (r.step_us) {
      ++t.measured_rows;
      t.measured_us += *r.step_us;
    } else {
      ++t.missing_rows;
    }
    if (r.trace_step_us) t.trace_us = t.trace_us.value_or(0) + *r.trace_step_us;
    if (r.step_us && r.trace_step_us) {
      ++t.compared_rows;
      t.compared_measured_us += *r.step_us;
      t.compared_trace_us += *r.trace_step_us;
    }
  }
  t.calls /= std::max<int64_t>(w.steps, 1);
  if (t.compared_rows > 0 && t.compared_trace_us > 0) t.ratio = t.compared_measured_us / t.compared_trace_us;
  const double steps = double(std::max<int64_t>(w.steps, 1));
  t.unmapped_ops = w.unmapped_count();
  for (const UnmappedOp& u : w.unmapped)
    if (u.kernel_us) t.unmapped_trace_us = t.unmapped_trace_us.value_or(0) + *u.kernel_us / steps;
  if (w.all_kernels_us) {
    t.all_kernels_us = *w.all_kernels_us / steps;
    // Every GEMM op's kernels, in the total or not (attention's [fused] ones are GEMM ops too).
    const double gemm_ops_us = w.kernel_us().value_or(0) / steps + t.unmapped_trace_us.value_or(0);
    t.other_kernels_us = std::max(0.0, *t.all_kernels_us - gemm_ops_us);
  }
  return t;
}

std::optional<ClockInference> infer_clock(const std::vector<ClockEvidence>& evidence) {
  std::vector<std::pair<double, double>> clocks;  // (clock, weight)
  double total = 0;
  for (const ClockEvidence& e : evidence) {
    if (e.trace_us < kClockEvidenceFromUs || e.measured_us <= 0 || e.measured_mhz <= 0) continue;
    clocks.emplace_back(e.measured_mhz * e.measured_us / e.trace_us, e.trace_us);
    total += e.trace_us;
  }
  if (clocks.empty()) return std::nullopt;
  std::sort(clocks.begin(), clocks.end());
  // The clock at a share of the weight: the first whose cumulative weight reaches it.
  const auto at = [&](double share) {
    double sum = 0;
    for (const auto& [mhz, weight] : clocks) {
      sum += weight;
      if (sum >= share * total) return mhz;
    }
    return clocks.back().first;
  };
  return ClockInference{at(0.5), at(0.25), at(0.75), clocks.size()};
}

StepClockCall step_clock_call(const std::optional<ClockInference>& by_gemms, std::optional<double> burst_mhz,
                              const std::optional<RecordedClocks>& recorded, bool replay_always) {
  if (replay_always) return {true, false, "--clocks replay"};
  const bool held_by_power = recorded && recorded->busy_samples > 0 && recorded->power_median_w &&
                             recorded->power_limit_w &&
                             *recorded->power_median_w >= kPowerHeldShare * *recorded->power_limit_w;
  if (held_by_power) {
    const std::optional<double> boost = recorded->max_sm_clock_mhz ? recorded->max_sm_clock_mhz : burst_mhz;
    if (boost && recorded->sm_clock_median_mhz < kBoostShare * *boost)
      return {true, false,
              fmt::format("the step recorded at {:.0f} MHz and {:.0f} W (NVML, medians; power limit {:.0f} W), "
                          "below the boost clock ({:.0f} MHz)",
                          recorded->sm_clock_median_mhz, *recorded->power_median_w, *recorded->power_limit_w,
                          *boost)};
  }
  if (!by_gemms) return {true, false, "no compute-bound GEMM of the trace tells its clock"};
  if (burst_mhz && by_gemms->mhz >= kBoostShare * *burst_mhz) return {false, true, ""};
  // The clock line gives the GEMMs' clock itself (the inferred one): the reason only names it.
  return {true, false, "the trace's compute-bound GEMMs ran below the boost clock"};
}

GpuMatch trace_gpu_match(const Workload& w, const DeviceContext& d) {
  if (w.device.empty()) return GpuMatch::kUnknown;
  if (w.device != d.gpu_name) return GpuMatch::kOther;
  if (w.device_sms > 0 && d.sm_count > 0 && w.device_sms != d.sm_count) return GpuMatch::kOther;
  return GpuMatch::kSame;
}

std::string_view gpu_match_name(GpuMatch match) {
  switch (match) {
    case GpuMatch::kUnknown: return "unknown";
    case GpuMatch::kSame: return "same";
    case GpuMatch::kOther: return "other";
  }
  return "";
}

}  // namespace shapescope
