// The parts of measurement that need no GPU: what a request costs in memory and (roughly) in time,
// and the command that measures a point again. Plain C++: --dry-run and the views use them anywhere.
#include <fmt/format.h>

#include <algorithm>

#include "common/error.hpp"
#include "common/units.hpp"
#include "backends/variants.hpp"
#include "core/backend_kind.hpp"
#include "core/fp8.hpp"
#include "measure/measure.hpp"

namespace shapescope {
namespace {

constexpr int64_t kWorkspaceBytes = 32ll << 20;  // cuBLASLt's recommendation for Hopper

}  // namespace

double estimate_us(const Problem& p) {
  double rate = 400e12;  // bf16/fp16 tensor cores, discounted for unaligned shapes
  if (p.dtype == DType::kFp8) rate = 800e12;
  if (p.dtype == DType::kTf32) rate = 200e12;
  if (p.dtype == DType::kFp32) rate = 40e12;
  const double bytes = double(p.bytes());
  return 5.0 + p.flops() / rate * 1e6 + bytes / 2.0e12 * 1e6;
}

void check_fits(const MemoryPlan& mem, int64_t free_bytes, int64_t total_bytes) {
  // Leave a margin for cuBLAS's own allocations and the CUDA graphs.
  const int64_t margin = 256ll << 20;
  const auto in_gib = [](int64_t bytes) { return gib(double(bytes), 2); };
  if (mem.total() + margin > free_bytes)
    throw Error(ExitCode::kOutOfMemory,
                fmt::format("the sweep's largest point needs {} of GPU memory (A {}, B {}, C {}, "
                            "flush {}, workspace {}{}) plus a {} margin; {} of {} is free",
                            in_gib(mem.total()), in_gib(mem.a), in_gib(mem.b), in_gib(mem.c), in_gib(mem.flush),
                            in_gib(mem.workspace),
                            mem.reference > 0 ? fmt::format(", verification copy {}", in_gib(mem.reference)) : "",
                            in_gib(margin), in_gib(free_bytes), in_gib(total_bytes)));
}

MemoryPlan memory_plan(const std::vector<Problem>& problems, const DeviceContext& device, bool hot) {
  MemoryPlan plan;
  for (const auto& p : problems) {
    // A cast reads its source in bf16 from the operand's buffer.
    const int in = p.cast != CastOperand::kNone ? 2 : input_bytes(p.dtype);
    plan.a = std::max(plan.a, p.a_span() * in);
    plan.b = std::max(plan.b, p.b_span() * in);
    plan.c = std::max(plan.c, p.c_span() * output_bytes(p.dtype));
  }
  // A memset as large as L2 evicts the operands of the previous call (MEASURE.md: ~19 us for 50 MB).
  plan.flush = hot ? 0 : std::max<int64_t>(device.l2_bytes, 1 << 20);
  plan.workspace = kWorkspaceBytes;
  return plan;
}

void add_fp8_casts(MeasureRequest& request) {
  if (request.pairs.empty())
    for (size_t p = 0; p < request.problems.size(); ++p)
      for (size_t b = 0; b < request.backends.size(); ++b) request.pairs.emplace_back(p, b);
  const size_t gemms = request.problems.size(), cast = request.backends.size();
  request.backends.emplace_back(BackendKind::kCast);
  for (size_t i = 0; i < gemms; ++i) {
    const Problem gemm = request.problems[i];
    if (gemm.dtype != DType::kFp8 || gemm.cast != CastOperand::kNone || gemm.grouped()) continue;
    for (CastOperand operand : {CastOperand::kA, CastOperand::kB}) {
      const Problem c = cast_problem(gemm, gemm.recipe, operand);
      if (std::find(request.problems.begin() + long(gemms), request.problems.end(), c) != request.problems.end()) continue;
      request.problems.push_back(c);
      request.pairs.emplace_back(request.problems.size() - 1, cast);
    }
  }
}

std::string rerun_command(const PointKey& key, int lt_algos) {
  const Problem& p = key.problem;
  // A grouped call is no sweep: a GEMM list with a row per group, all of one group id, is one.
  if (p.grouped())
    return fmt::format("shapescope profile --gemms LIST  # LIST: one row per group of {} {} {} (the points' groups "
                       "column), all with the same group id",
                       p.shape_string(), to_string(p.dtype), to_string(p.layout));
  // A cast is measured beside its fp8 GEMM, by explain of that GEMM (or profile of its step).
  if (p.cast != CastOperand::kNone)
    return fmt::format("shapescope explain MxNxK --dtype fp8 --layout nt --recipe {}  # measures this {} (recipe {}) "
                       "beside its GEMM",
                       recipe_text(p.recipe), p.shape_string(), recipe_text(p.recipe));
  // Our kernels: the variant's key (the point's algo) is its own selection, "custom:<kernel>:<BMxBN>:<schedule>".
  std::string backend(to_string(key.backend));
  if (key.backend == BackendKind::kCustom && !key.algo.empty()) backend += ":" + key.algo;
  std::string cmd = fmt::format("shapescope sweep --m {} --n {} --k {} --dtype {} --layout {} --backend {}",
                                p.m, p.n, p.k, to_string(p.dtype), to_string(p.layout), backend);
  if (key.backend == BackendKind::kCublasLt && key.algo != default_algo(key.backend))
    cmd += fmt::format(" --lt-algos {}", std::max(lt_algos, std::stoi(key.algo.substr(1)) + 1));
  if (p.dtype == DType::kFp8 && p.recipe != Fp8Recipe{}) cmd += fmt::format(" --recipe {}", recipe_text(p.recipe));
  if (p.batch > 1) cmd += fmt::format(" --batch {}", p.batch);
  Problem natural = p;
  natural.lda = p.a_cols();
  natural.ldb = p.b_cols();
  natural.ldc = p.n;
  if (p.lda != natural.lda || p.ldb != natural.ldb || p.ldc != natural.ldc)
    cmd += fmt::format(" --lda {} --ldb {} --ldc {}", p.lda, p.ldb, p.ldc);
  if (p.off_a) cmd += fmt::format(" --offset {}", p.off_a);
  if (key.hot) cmd += " --hot";
  return cmd;
}

PointKey sentinel_key(const std::vector<Problem>& problems, bool hot, ClockState clocks) {
  PointKey key;
  Problem& p = key.problem;
  p.dtype = problems.empty() ? DType::kBf16 : problems.front().dtype;
  p.layout = problems.empty() ? Layout::kNN : problems.front().layout;
  // fp8's GEMMs are nt (a request of casts has other layouts), with one scale per tensor: every GPU
  // with fp8 runs it.
  if (p.dtype == DType::kFp8) p.layout = Layout::kNT;
  p.m = p.n = p.k = p.dtype == DType::kFp32 ? 1024 : 2048;
  p.lda = p.a_cols();
  p.ldb = p.b_cols();
  p.ldc = p.n;
  const BackendKind kind = p.dtype == DType::kFp8 ? BackendKind::kCublasLt : BackendKind::kCublas;
  key.backend = kind;
  key.algo = std::string(default_algo(kind));
  key.hot = hot;
  key.clocks = clocks;
  return key;
}

size_t count_points(size_t problems, const std::vector<BackendSpec>& backends, int lt_algos) {
  size_t points = 0;
  for (const BackendSpec& b : backends) {
    size_t per_problem = 1;
    if (b.kind == BackendKind::kCublasLt) per_problem = size_t(lt_algos);
    if (b.kind == BackendKind::kCustom) per_problem = select_variants(b).size();
    points += problems * per_problem;
  }
  return points;
}

PlanCost plan_cost(const std::vector<Problem>& problems, const std::vector<BackendSpec>& backends, int lt_algos,
                   int samples, bool hot, const DeviceContext& device) {
  PlanCost cost;
  cost.memory = memory_plan(problems, device, hot);
  cost.points = count_points(problems.size(), backends, lt_algos);
  double total_us = 0;
  for (const auto& p : problems) total_us += estimate_us(p);
  const double flush_us = hot ? 0 : double(cost.memory.flush) / 2.5e6;
  cost.seconds = (total_us + flush_us * double(problems.size())) * double(cost.points) /
                 double(problems.size()) * samples / 1e6;
  return cost;
}

}  // namespace shapescope
