#include "model/workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace shapescope {

namespace {

std::optional<double> add_times(const std::optional<double>& a, const std::optional<double>& b) {
  if (!a) return b;
  if (!b) return a;
  return *a + *b;
}

}  // namespace

void join_name(std::string& into, const std::string& name) {
  // A joined list ("q_proj+k_proj", when two merged calls merge again) joins name by name.
  if (const size_t plus = name.find('+'); plus != std::string::npos) {
    join_name(into, name.substr(0, plus));
    join_name(into, name.substr(plus + 1));
    return;
  }
  static const std::string kMore = "+...";
  if (name.empty() || (into.size() >= kMore.size() && into.compare(into.size() - kMore.size(), kMore.size(), kMore) == 0))
    return;
  for (size_t start = 0; start < into.size();) {
    const size_t end = std::min(into.find('+', start), into.size());
    if (into.compare(start, end - start, name) == 0) return;
    start = end + 1;
  }
  if (!into.empty() && into.size() + 1 + name.size() > kMaxOriginChars) {
    into += kMore;
    return;
  }
  into += (into.empty() ? "" : "+") + name;
}

double WorkloadGemm::flops() const {
  double total = 0;
  for (const Problem& p : problems) total += p.flops();
  return total;
}

std::string WorkloadGemm::shape_text() const {
  if (problems.empty()) return "(none)";
  const Problem& p = problems.front();
  if (!grouped()) return fmt::format("{} {}", p.shape_string(), to_string(p.layout));
  const auto [lo, hi] = std::minmax_element(problems.begin(), problems.end(),
                                            [](const Problem& a, const Problem& b) { return a.m < b.m; });
  const std::string m = lo->m == hi->m ? std::to_string(lo->m) : fmt::format("{}..{}", lo->m, hi->m);
  return fmt::format("grouped {} x {}x{}x{} {}", problems.size(), m, p.n, p.k, to_string(p.layout));
}

bool same_call(const WorkloadGemm& a, const WorkloadGemm& b) {
  return a.problems == b.problems && a.usually_fused == b.usually_fused &&
         a.group_rows_estimated == b.group_rows_estimated;
}

namespace {

size_t call_hash(const WorkloadGemm& g) {
  size_t seed = std::hash<bool>{}(g.usually_fused) * 2 + std::hash<bool>{}(g.group_rows_estimated);
  for (const Problem& p : g.problems) seed ^= hash_value(p) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
  return seed;
}

}  // namespace

size_t Workload::add(WorkloadGemm gemm) {
  if (indexed_calls != gemms.size()) {
    call_index.clear();
    for (size_t i = 0; i < gemms.size(); ++i) call_index.emplace(call_hash(gemms[i]), i);
  }
  const size_t hash = call_hash(gemm);
  WorkloadGemm* same = nullptr;
  for (auto [it, end] = call_index.equal_range(hash); it != end && !same; ++it)
    if (same_call(gemms[it->second], gemm)) same = &gemms[it->second];
  if (!same) {
    call_index.emplace(hash, gemms.size());
    gemms.push_back(std::move(gemm));
    indexed_calls = gemms.size();
    return gemms.size() - 1;
  }
  indexed_calls = gemms.size();
  same->count += gemm.count;
  same->kernels += gemm.kernels;
  same->kernel_us = add_times(same->kernel_us, gemm.kernel_us);
  join_name(same->origin, gemm.origin);
  for (std::string& name : gemm.kernel_names)
    if (std::find(same->kernel_names.begin(), same->kernel_names.end(), name) == same->kernel_names.end())
      same->kernel_names.push_back(std::move(name));
  return size_t(same - gemms.data());
}

void Workload::add_unmapped(const std::string& op, const std::string& reason, std::optional<double> kernel_us) {
  const auto same = std::find_if(unmapped.begin(), unmapped.end(),
                                 [&](const UnmappedOp& u) { return u.op == op && u.reason == reason; });
  if (same == unmapped.end()) {
    unmapped.push_back({op, reason, 1, kernel_us});
    return;
  }
  same->count += 1;
  same->kernel_us = add_times(same->kernel_us, kernel_us);
}

int64_t Workload::calls() const {
  int64_t total = 0;
  for (const WorkloadGemm& g : gemms) total += g.count;
  return total;
}

double Workload::flops() const {
  double total = 0;
  for (const WorkloadGemm& g : gemms) total += double(g.count) * g.flops();
  return total;
}

std::optional<double> Workload::kernel_us() const {
  std::optional<double> total;
  for (const WorkloadGemm& g : gemms) total = add_times(total, g.kernel_us);
  return total;
}

int64_t Workload::unmapped_count() const {
  int64_t total = 0;
  for (const UnmappedOp& u : unmapped) total += u.count;
  return total;
}

std::vector<DimensionKnob> dimension_knobs(const Workload& w) {
  std::map<int64_t, DimensionKnob> by_value;
  for (size_t g = 0; g < w.gemms.size(); ++g) {
    const WorkloadGemm& call = w.gemms[g];
    if (call.usually_fused) continue;
    const double flops = double(call.count) * call.flops();
    std::set<int64_t> counted;  // a call counts once per value, however many of its dims have it
    for (size_t p = 0; p < call.problems.size(); ++p) {
      const Problem& q = call.problems[p];
      for (const auto& [dim, value] : {std::pair{Dim::kM, q.m}, std::pair{Dim::kN, q.n}, std::pair{Dim::kK, q.k}}) {
        DimensionKnob& knob = by_value[value];
        knob.value = value;
        knob.uses.push_back({g, p, dim});
        if (!counted.insert(value).second) continue;
        knob.calls += call.count;
        knob.flops += flops;
        const DimensionUse& best = knob.uses[knob.probe];
        if (double(w.gemms[best.gemm].count) * w.gemms[best.gemm].flops() < flops) knob.probe = knob.uses.size() - 1;
      }
    }
  }
  std::vector<DimensionKnob> out;
  for (auto& [value, knob] : by_value) out.push_back(std::move(knob));
  std::stable_sort(out.begin(), out.end(), [](const DimensionKnob& a, const DimensionKnob& b) { return a.flops > b.flops; });
  return out;
}

ChoiceInfo knob_choice(const Workload& w, const DimensionKnob& knob) {
  const DimensionUse& use = knob.uses.at(knob.probe);
  const WorkloadGemm& call = w.gemms.at(use.gemm);
  ChoiceInfo c;
  c.choice = Choice::kSize;
  c.name = std::to_string(knob.value);
  c.value = knob.value;
  c.probe_name = call.shape_text();
  c.probe = call.problems.at(use.problem);
  c.probe_dim = use.dim;
  return c;
}

WorkloadGemm with_dimension(WorkloadGemm call, int64_t from, int64_t to) {
  for (Problem& p : call.problems) {
    const bool packed_a = p.lda == p.a_cols(), packed_b = p.ldb == p.b_cols(), packed_c = p.ldc == p.n;
    for (int64_t* size : {&p.m, &p.n, &p.k})
      if (*size == from) *size = to;
    if (packed_a || p.lda < p.a_cols()) p.lda = p.a_cols();
    if (packed_b || p.ldb < p.b_cols()) p.ldb = p.b_cols();
    if (packed_c || p.ldc < p.n) p.ldc = p.n;
  }
  // The trace's times were measured for the old shape.
  call.kernel_us.reset();
  call.kernels = 0;
  call.kernel_names.clear();
  return call;
}

Workload with_dimension(const Workload& w, int64_t from, int64_t to) {
  Workload out = w;  // everything but the calls, which are added back changed (and merged)
  out.gemms.clear();
  out.timeline.reset();  // its segments name the old calls
  for (const WorkloadGemm& call : w.gemms) out.add(with_dimension(call, from, to));
  return out;
}

std::vector<size_t> knob_calls(const DimensionKnob& knob) {
  std::vector<size_t> out;
  for (const DimensionUse& u : knob.uses)  // in workload order: a call's uses are adjacent
    if (out.empty() || out.back() != u.gemm) out.push_back(u.gemm);
  return out;
}

double step_flops(const Workload& w) {
  double total = 0;
  for (const WorkloadGemm& g : w.gemms)
    if (!g.usually_fused) total += double(g.count) * g.flops();
  return total / double(std::max<int64_t>(w.steps, 1));
}

std::optional<StepTime> workload_step_time(const Workload& w, const GemmTimeOf& time_of) {
  return step_time(step_time_terms(w, time_of));
}

StepTimeTerms step_time_terms(const Workload& w, const GemmTimeOf& time_of) {
  StepTimeTerms t;
  t.of_call.resize(w.gemms.size());
  for (size_t i = 0; i < w.gemms.size(); ++i) {
    const WorkloadGemm& g = w.gemms[i];
    if (g.usually_fused) continue;
    t.of_call[i] = time_of(grouped_problem(g.problems));
    if (!t.of_call[i]) {
      ++t.missing;
      continue;
    }
    const double us = double(g.count) / double(std::max<int64_t>(w.steps, 1)) * t.of_call[i]->median_us;
    t.us += us;
    t.noise_us += us * t.of_call[i]->noise;
  }
  return t;
}

std::optional<StepTime> step_time(const StepTimeTerms& t) {
  if (t.missing > 0) return std::nullopt;
  StepTime out;
  out.us = t.us;
  if (t.us > 0) out.noise = t.noise_us / t.us;
  return out;
}

std::optional<StepTime> step_time_with_dimension(const Workload& w, const StepTimeTerms& terms,
                                                 const DimensionKnob& knob, int64_t to, const GemmTimeOf& time_of) {
  StepTimeTerms after = terms;  // its of_call is not read below
  const double steps = double(std::max<int64_t>(w.steps, 1));
  for (const size_t i : knob_calls(knob)) {
    const WorkloadGemm& g = w.gemms[i];
    const double share = double(g.count) / steps;
    if (const std::optional<GemmTime>& old = terms.of_call[i]) {
      after.us -= share * old->median_us;
      after.noise_us -= share * old->median_us * old->noise;
    } else {
      --after.missing;
    }
    const std::optional<GemmTime> now = time_of(grouped_problem(with_dimension(g, knob.value, to).problems));
    if (!now) {
      ++after.missing;
      continue;
    }
    after.us += share * now->median_us;
    after.noise_us += share * now->median_us * now->noise;
  }
  return step_time(after);
}

double extra_step_flops(const Workload& w, const DimensionKnob& knob, int64_t to) {
  double extra = 0;
  for (const size_t i : knob_calls(knob)) {
    const WorkloadGemm& g = w.gemms[i];
    extra += double(g.count) * (with_dimension(g, knob.value, to).flops() - g.flops());
  }
  return extra / double(std::max<int64_t>(w.steps, 1));
}

Evaluation evaluate_size(const Workload& w, const DimensionKnob& knob, PadCandidate candidate,
                         const std::optional<StepTime>& before, const std::optional<StepTime>& after) {
  Evaluation e;
  e.touched = knob.uses.size();
  e.extra_flops = extra_step_flops(w, knob, candidate.value);
  e.candidate = std::move(candidate);
  add_saving(e, before, after);
  return e;
}

Problem packed_problem(int64_t m, int64_t n, int64_t k, Layout layout, DType dtype, int64_t batch) {
  Problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.batch = batch;
  p.layout = layout;
  p.dtype = dtype;
  p.lda = p.a_cols();
  p.ldb = p.b_cols();
  p.ldc = p.n;
  return p;
}

}  // namespace shapescope
