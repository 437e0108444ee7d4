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
  if (name.empty() || ("+" + into + "+").find("+" + name + "+") != std::string::npos) return;
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

size_t Workload::add(WorkloadGemm gemm) {
  const auto same = std::find_if(gemms.begin(), gemms.end(), [&](const WorkloadGemm& g) { return same_call(g, gemm); });
  if (same == gemms.end()) {
    gemms.push_back(std::move(gemm));
    return gemms.size() - 1;
  }
  same->count += gemm.count;
  same->kernels += gemm.kernels;
  same->kernel_us = add_times(same->kernel_us, gemm.kernel_us);
  join_name(same->origin, gemm.origin);
  for (std::string& name : gemm.kernel_names)
    if (std::find(same->kernel_names.begin(), same->kernel_names.end(), name) == same->kernel_names.end())
      same->kernel_names.push_back(std::move(name));
  return size_t(same - gemms.begin());
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

Workload with_dimension(const Workload& w, int64_t from, int64_t to) {
  Workload out = w;  // everything but the calls, which are added back changed (and merged)
  out.gemms.clear();
  out.timeline.reset();  // its segments name the old calls
  for (WorkloadGemm call : w.gemms) {
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
    out.add(std::move(call));
  }
  return out;
}

double step_flops(const Workload& w) {
  double total = 0;
  for (const WorkloadGemm& g : w.gemms)
    if (!g.usually_fused) total += double(g.count) * g.flops();
  return total / double(std::max<int64_t>(w.steps, 1));
}

std::optional<StepTime> workload_step_time(const Workload& w,
                                           const std::function<std::optional<GemmTime>(const Problem&)>& time_of) {
  StepTime t;
  double weighted_noise = 0;
  for (const WorkloadGemm& g : w.gemms) {
    if (g.usually_fused) continue;
    const std::optional<GemmTime> x = time_of(grouped_problem(g.problems));
    if (!x) return std::nullopt;
    const double us = double(g.count) / double(std::max<int64_t>(w.steps, 1)) * x->median_us;
    t.us += us;
    weighted_noise += us * x->noise;
  }
  if (t.us > 0) t.noise = weighted_noise / t.us;
  return t;
}

Evaluation evaluate_size(const Workload& w, const DimensionKnob& knob, PadCandidate candidate,
                         const std::optional<StepTime>& before, const std::optional<StepTime>& after) {
  Evaluation e;
  e.touched = knob.uses.size();
  e.extra_flops = step_flops(with_dimension(w, knob.value, candidate.value)) - step_flops(w);
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
