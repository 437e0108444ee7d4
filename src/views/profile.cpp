#include "views/profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <variant>

#include "backends/variants.hpp"
#include "common/clock.hpp"
#include "common/error.hpp"
#include "core/backend_kind.hpp"
#include "kernels/registry.hpp"
#include "model/fp8_steps.hpp"
#include "model/kernel_name.hpp"
#include "views/annotated.hpp"
#include "views/explain.hpp"
#include "views/point_index.hpp"

namespace shapescope {
namespace {

// The calls into explain's view (views/explain.hpp): nothing else in this file knows explain, so
// that a rewrite of explain changes these functions only. A GEMM's explanation as a job (or why it
// has none): its problem planned as explain plans one, unpaired (the what-ifs are paired together
// afterwards, views/profile_what_ifs.cpp).
std::variant<ExplainJob, std::string> verdict_job(const Problem& p, BackendKind backend, const ProfileRequest& r) {
  ExplainJob job;
  ExplainRequest& o = job.request;
  o.shape = ShapeArg{p.m, p.n, p.k, false};
  o.shape_text = fmt::format("{}x{}x{}", p.m, p.n, p.k);
  o.form.dtype = p.dtype;
  if (p.dtype == DType::kFp8) o.form.recipe = p.recipe;
  o.form.layout = p.layout;
  o.form.batch = p.batch;
  // Leading dimensions that are not the packed ones (a slice of a wider tensor) stay as they are.
  if (p.lda != p.a_cols()) o.form.lda = p.lda;
  if (p.ldb != p.b_cols()) o.form.ldb = p.ldb;
  if (p.ldc != p.n) o.form.ldc = p.ldc;
  if (p.off_a != p.off_b || p.off_c != 0) return std::string("explain takes one offset for A and B, none for C");
  o.form.offset = p.off_a;
  o.backend = BackendSpec(backend);
  // A verdict compares its GEMM with neighbours and controls, unpaired: in the state the step's GEMMs
  // were measured in (at burst clocks each graph is followed by a cool-down, so every point runs at
  // the same clock; back to back at the power cap, neighbours measured after the targets read up to
  // 1.1x faster than them on an H100). The points the what-ifs pair afterwards are surveyed
  // (paired_later: a few samples each); the launch floor, the copy and the casts keep explain's
  // stopping rule.
  o.measure.clocks = r.clocks;
  o.measure.burst_idle = r.burst_idle;
  o.pair_seconds = 0;  // the what-ifs are paired together afterwards (views/profile_what_ifs.cpp)
  o.paired_later = true;
  o.max_error = r.max_error;
  o.db = r.db;
  try {
    check_form(o.form);
    job.target = form_problem(o.form, p.m, p.n, p.k);
  } catch (const Error& e) {
    return std::string(e.what());
  }
  return job;
}

// Each job's explanation: measured together with a device and a store (explain_many), else read from
// the request's store one by one.
std::vector<ExplainJobResult> explain_jobs(const std::vector<ExplainJob>& jobs, const DeviceContext* device,
                                           Store* store, const std::atomic<bool>* interrupted,
                                           const PhaseDone& phase_done, const StoreRead* read) {
  if (device) return explain_many(jobs, *device, *store, interrupted, phase_done);
  std::vector<ExplainJobResult> out;
  for (const ExplainJob& job : jobs) {
    try {
      out.push_back({explain_without_gpu(job.request, nullptr, job.target, read), ""});
    } catch (const Error& e) {
      if (e.code() == ExitCode::kInterrupted) throw;
      out.push_back({std::nullopt, e.what()});
    }
  }
  return out;
}

// What a row's verdict is about: the row's GEMM, or a grouped call's largest group (explain knows
// single GEMMs), run as cuBLAS runs one expert of a per-expert loop.
std::pair<Problem, BackendKind> explained(const ProfileRow& row, BackendKind backend) {
  if (!row.problem.grouped()) return {row.problem, row.backend};
  size_t largest = 0;
  for (size_t g = 1; g < row.problem.groups.size(); ++g)
    if (row.problem.group(g).flops() > row.problem.group(largest).flops()) largest = g;
  return {row.problem.group(largest), backend};
}

// `read`: without a device, the store and its points, read once for every verdict.
void add_verdicts(ProfileResult& result, const DeviceContext* device, Store* store,
                  const std::atomic<bool>* interrupted, const StoreRead* read = nullptr) {
  if (!result.request.verdicts) return;
  std::vector<ExplainJob> jobs;
  std::vector<ProfileEntry*> of_job;
  for (ProfileEntry& e : result.entries) {
    if (!e.row.time) continue;
    const auto [problem, backend] = explained(e.row, result.request.backend);
    if (e.row.problem.grouped()) e.verdict_shape = fmt::format("{} {}", problem.shape_string(), to_string(problem.layout));
    auto job = verdict_job(problem, backend, result.request);
    if (const std::string* why = std::get_if<std::string>(&job)) {
      e.no_verdict = *why;
      continue;
    }
    jobs.push_back(std::move(std::get<ExplainJob>(job)));
    of_job.push_back(&e);
  }
  const PhaseDone phase_done = [&](const std::string& name, double seconds) { result.note_phase(name, seconds); };
  std::vector<ExplainJobResult> got = explain_jobs(jobs, device, store, interrupted, phase_done, read);
  for (size_t j = 0; j < got.size(); ++j) {
    of_job[j]->explanation = std::move(got[j].report);
    of_job[j]->no_verdict = got[j].why_none;
  }
}

// A grouped call's groups run as a loop of ordinary GEMMs: the sum of their medians, where every
// group is measured. PointOf: a row's point (ours_of: our grouped kernel's, where it was measured).
using LoopOf = std::function<std::optional<double>(const ProfileRow&)>;
using PointOf = std::function<const StoredPoint*(const ProfileRow&)>;

// The loop of a call's groups from each group's point (`group_point`: nullptr where it has none).
LoopOf loop_of_groups(std::function<const StoredPoint*(const Problem&)> group_point) {
  return [group_point](const ProfileRow& r) {
    return groups_loop_us(r.problem, [&](const Problem& group) -> std::optional<double> {
      const StoredPoint* p = group_point(group);
      return p ? std::optional<double>(p->result.timing.median_us) : std::nullopt;
    });
  };
}

// Our grouped kernel's variant for a grouped call: 128x256 (05's fastest tile), where it runs the call
// on a GPU of compute capability cc.
std::optional<BackendSpec> our_grouped_kernel(const Problem& p, int cc) {
  const BackendSpec spec(BackendKind::kCustom, VariantSelection{"05_wgmma_tma", std::make_pair(128, 256), "grouped"});
  const std::vector<const kernels::Variant*> v = select_variants(spec);
  if (!p.grouped() || v.size() != 1 || !kernels::unsupported(*v.front(), p, cc).empty()) return std::nullopt;
  return spec;
}

// The entries in rank order, each with the kernel and annotation of its point. A grouped call's time
// is the fastest of the one grouped call, its per-group loop (`loop_of`, which may be empty) and our
// grouped kernel (`ours_of`, which may be empty).
void fill_entries(ProfileResult& result, std::vector<ProfileRow> rows, const Store& store, const PointOf& point_of,
                  const LoopOf& loop_of = {}, const PointOf& ours_of = {}) {
  rank_rows(rows, [&](const ProfileRow& r) -> std::optional<GemmTime> {
    const StoredPoint* p = point_of(r);
    std::optional<GemmTime> best;
    if (p) best = GemmTime{p->result.timing.median_us, p->result.timing.noise};
    const std::optional<double> loop = loop_of && r.problem.grouped() ? loop_of(r) : std::nullopt;
    if (loop && (!best || *loop < best->median_us)) best = GemmTime{*loop, 0};
    const StoredPoint* ours = ours_of && r.problem.grouped() ? ours_of(r) : nullptr;
    if (ours && (!best || ours->result.timing.median_us < best->median_us))
      best = GemmTime{ours->result.timing.median_us, ours->result.timing.noise};
    return best;
  });
  result.totals = profile_totals(result.workload, rows);
  for (ProfileRow& r : rows) {
    ProfileEntry e;
    e.way = BackendSpec(r.backend);
    const StoredPoint* p = point_of(r);
    if (p) {
      e.annotation = annotate_points(store, {*p}).front();
      if (e.annotation->main_kernel >= 0) e.kernel = short_kernel_name(p->kernels[size_t(e.annotation->main_kernel)].name);
    }
    // The step's calls of a grouped call run our grouped kernel where it was faster.
    // (Its point's algo is the variant's key; one this build does not know cannot run here.)
    const StoredPoint* ours = ours_of && r.problem.grouped() ? ours_of(r) : nullptr;
    const std::optional<BackendSpec> ours_spec = ours ? stored_variant_spec(ours->key.algo) : std::nullopt;
    if (ours_spec && (!p || ours->result.timing.median_us < p->result.timing.median_us)) {
      e.way = *ours_spec;
      p = ours;
    }
    if (p) e.point_clock_mhz = p->result.timing.sm_clock_mhz;
    if (r.problem.grouped()) {
      if (const StoredPoint* p = point_of(r)) e.grouped_us = p->result.timing.median_us;
      if (loop_of) e.loop_us = loop_of(r);
      if (const StoredPoint* ours = ours_of ? ours_of(r) : nullptr) e.custom_us = ours->result.timing.median_us;
    }
    e.row = std::move(r);
    result.entries.push_back(std::move(e));
  }
}

// The stored point of each row (the library's own choice, cold), on the GPU that has the most of them.
// The store's cold points (`pool`: a PointIndex of them) matched to the rows through a hash table, so
// that a list of 200,000 GEMMs costs a pass over each, not a pass over the store per GEMM.
std::vector<std::optional<StoredPoint>> stored_points(const std::vector<ProfileRow>& rows, const PointIndex& pool,
                                                      StoredSource& source) {
  std::vector<std::vector<const StoredPoint*>> candidates(rows.size());
  std::map<std::string, std::pair<size_t, const StoredPoint*>> per_setup;  // rows found, a point of it
  for (size_t i = 0; i < rows.size(); ++i) {
    for (const StoredPoint* p : pool.of(rows[i].problem))
      if (p->key.backend == rows[i].backend && p->key.algo == default_algo(rows[i].backend)) candidates[i].push_back(p);
  }
  for (const auto& list : candidates) {
    std::map<std::string, const StoredPoint*> setups;
    for (const StoredPoint* p : list) setups[p->device.gpu_uuid + p->device.driver + p->device.cublas] = p;
    for (const auto& [key, p] : setups) {
      auto& entry = per_setup[key];
      ++entry.first;
      entry.second = p;
    }
  }
  const StoredPoint* anchor = nullptr;
  size_t most = 0;
  for (const auto& [key, entry] : per_setup)
    if (entry.first > most) std::tie(most, anchor) = entry;
  std::vector<std::optional<StoredPoint>> out(rows.size());
  if (!anchor) return out;
  source.device = anchor->device;
  for (size_t i = 0; i < rows.size(); ++i) {
    for (const StoredPoint* p : candidates[i]) {
      if (!same_setup(p->device, anchor->device)) continue;
      if (!out[i] || p->result.measured_at > out[i]->result.measured_at) out[i] = *p;
    }
    if (!out[i]) continue;
    ++source.points;
    const std::string& at = out[i]->result.measured_at;
    if (source.first.empty() || at < source.first) source.first = at;
    if (at > source.last) source.last = at;
  }
  return out;
}

// The casts of the rows' fp8 GEMMs that the step pays (model/fp8_steps.hpp), each measured on backend cast.
std::vector<StepCast> step_casts(const std::vector<ProfileRow>& rows) {
  std::vector<std::pair<Problem, double>> gemms;
  for (const ProfileRow& r : rows)
    if (r.in_total) gemms.emplace_back(r.problem, r.calls_per_step);
  return step_fp8_casts(gemms);
}

// Their time per step from each cast's point (`point_of`: nullptr where it has none); nullopt without a cast.
std::optional<ProfileFp8Casts> casts_per_step(const std::vector<StepCast>& casts,
                                              const std::function<const StoredPoint*(const Problem&)>& point_of) {
  if (casts.empty()) return std::nullopt;
  ProfileFp8Casts total;
  total.casts = casts.size();
  for (const StepCast& c : casts)
    if (const StoredPoint* p = point_of(c.problem)) {
      total.us_per_step += c.per_step * p->result.timing.median_us;
      ++total.measured;
    }
  return total;
}

}  // namespace

std::optional<double> groups_loop_us(const Problem& call,
                                     const std::function<std::optional<double>(const Problem&)>& group_us) {
  double sum = 0;
  for (size_t g = 0; g < call.groups.size(); ++g) {
    const std::optional<double> us = group_us(call.group(g));
    if (!us) return std::nullopt;
    sum += *us;
  }
  return sum;
}

std::variant<ExplainJob, std::string> profile_verdict_job(const Problem& p, BackendKind backend,
                                                          const ProfileRequest& r) {
  return verdict_job(p, backend, r);
}

ProfileResult profile_measure(const Workload& workload, const ProfileRequest& request, const DeviceContext& device,
                              Store& store, const ProgressFor& progress_for, const std::atomic<bool>* interrupted) {
  ProfileResult result;
  result.workload = workload;
  result.request = request;
  std::vector<ProfileRow> rows = profile_rows(workload, request.backend, request.fused_in_total);
  // A trace's step is replayed at its own clock; its GEMMs one by one (kernels, verdicts) at boost clocks.
  const bool replay = workload.timeline && !request.clocks_given;
  if (replay) result.request.clocks = ClockState::kBurst;
  MeasuredSet set(device, store, request.samples, result.request.clocks, interrupted, "profile");
  std::vector<SpecProblem> wanted;
  const int cc = device.cc_major * 10 + device.cc_minor;
  for (const ProfileRow& r : rows) {
    wanted.emplace_back(r.problem, BackendSpec(r.backend));
    // A grouped call is also timed as the loop of its groups (what a per-expert loop runs), and with
    // our grouped kernel where it runs the call (the kernel class of PyTorch's _grouped_mm).
    for (size_t g = 0; r.problem.grouped() && g < r.problem.groups.size(); ++g)
      wanted.emplace_back(r.problem.group(g), BackendSpec(request.backend));
    if (const auto ours = our_grouped_kernel(r.problem, cc)) wanted.emplace_back(r.problem, *ours);
  }
  const std::vector<StepCast> casts = step_casts(rows);
  for (const StepCast& c : casts) wanted.emplace_back(c.problem, BackendSpec(BackendKind::kCast));
  const size_t points = set.unknown(wanted);
  const ProgressCallback progress = progress_for(points);
  auto since = std::chrono::steady_clock::now();
  const auto phase = [&](const char* name) {
    result.note_phase(name, seconds_since(since));
    since = std::chrono::steady_clock::now();
  };
  result.skipped = set.measure_all(wanted, single_progress_line(progress, points));
  phase("GEMMs measured");
  if (progress) progress(MeasureProgress{1.0, points, 0, true});
  const LoopOf loop_of = loop_of_groups([&](const Problem& group) { return set.find(group, request.backend); });
  const PointOf ours_of = [&](const ProfileRow& r) -> const StoredPoint* {
    const auto ours = our_grouped_kernel(r.problem, cc);
    return ours ? set.find(r.problem, *ours) : nullptr;
  };
  fill_entries(
      result, std::move(rows), store, [&](const ProfileRow& r) { return set.find(r.problem, r.backend); }, loop_of,
      ours_of);
  result.measured = set.summary();
  result.fp8_casts =
      casts_per_step(casts, [&](const Problem& cast) { return set.find(cast, BackendSpec(BackendKind::kCast)); });
  add_verdicts(result, &device, &store, interrupted);
  since = std::chrono::steady_clock::now();
  measure_what_ifs(result, device, store, interrupted);
  return result;
}

ProfileResult profile_from_store(const Workload& workload, const ProfileRequest& request) {
  ProfileResult result;
  result.workload = workload;
  result.request = request;
  std::vector<ProfileRow> rows = profile_rows(workload, request.backend, request.fused_in_total);
  const std::vector<StepCast> casts = step_casts(rows);
  const std::string again = "measure them on a GPU with the same command";
  if (!std::filesystem::exists(std::filesystem::symlink_status(request.db)))  // a dangling link: the store says so
    throw Error(ExitCode::kNoGpu, fmt::format("profile: no GPU here and no store '{}' to read the {} GEMMs of {} from; {}",
                                              request.db, rows.size(), workload.source, again));
  Store store(request.db, Store::Access::kReadOnly);
  StoredSource source;
  const std::vector<StoredPoint> pool = store.load_all();
  const PointIndex by_problem(pool, [](const StoredPoint& p) { return !p.key.hot; });
  const std::vector<std::optional<StoredPoint>> points = stored_points(rows, by_problem, source);
  if (source.points == 0)
    throw Error(ExitCode::kNoGpu, fmt::format("profile: no GPU here, and the store '{}' holds none of the {} GEMMs of {}; {}",
                                              request.db, rows.size(), workload.source, again));
  std::map<size_t, const StoredPoint*> of_gemm;  // by the row's call (rows are reordered when ranked)
  for (size_t i = 0; i < rows.size(); ++i)
    if (points[i]) of_gemm[rows[i].gemm] = &*points[i];
  // A point of the same GPU and setup (the newest), if stored.
  const auto newest_of = [&](BackendKind kind, const std::string& algo, const Problem& problem) -> const StoredPoint* {
    const StoredPoint* newest = nullptr;
    for (const StoredPoint* p : by_problem.of(problem))
      if (p->key.backend == kind && p->key.algo == algo && same_setup(p->device, source.device) &&
          (!newest || p->result.measured_at > newest->result.measured_at))
        newest = p;
    return newest;
  };
  // Our grouped kernel's point of a grouped call, and its groups as a loop.
  const PointOf ours_of = [&](const ProfileRow& r) -> const StoredPoint* {
    const auto ours = our_grouped_kernel(r.problem, source.device.cc_major * 10 + source.device.cc_minor);
    return ours ? newest_of(ours->kind, ours->algo(), r.problem) : nullptr;
  };
  const LoopOf loop_of = loop_of_groups([&](const Problem& group) {
    return newest_of(request.backend, std::string(default_algo(request.backend)), group);
  });
  fill_entries(
      result, std::move(rows), store,
      [&](const ProfileRow& r) -> const StoredPoint* {
        const auto it = of_gemm.find(r.gemm);
        return it != of_gemm.end() ? it->second : nullptr;
      },
      loop_of, ours_of);
  result.stored = source;
  result.fp8_casts = casts_per_step(casts, [&](const Problem& cast) {
    return newest_of(BackendKind::kCast, std::string(default_algo(BackendKind::kCast)), cast);
  });
  const PointIndex every_point(pool);
  const StoreRead read{store, pool, every_point};
  add_verdicts(result, nullptr, nullptr, nullptr, &read);
  return result;
}

}  // namespace shapescope
