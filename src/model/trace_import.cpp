#include "model/trace_import.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "common/error.hpp"
#include "model/input_file.hpp"
#include "model/trace_casts.hpp"
#include "model/trace_clocks.hpp"
#include "model/trace_fp8.hpp"
#include "model/trace_json.hpp"

namespace shapescope {

namespace {

using Json = nlohmann::json;
using namespace trace_json;

constexpr std::string_view kGemmOps[] = {"aten::mm",     "aten::addmm",  "aten::bmm",        "aten::baddbmm",
                                         "aten::matmul", "aten::linear", "aten::_scaled_mm", "aten::_grouped_mm"};
// cuBLAS takes every size as a 32-bit int.
constexpr int64_t kMaxSize = std::numeric_limits<int32_t>::max();

constexpr const char* kHowToRecord =
    "record one with torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], "
    "record_shapes=True) and prof.export_chrome_trace(\"trace.json\")";

bool is_gemm_op(std::string_view name) {
  return std::find(std::begin(kGemmOps), std::end(kGemmOps), name) != std::end(kGemmOps);
}

bool is_launch(const std::string& cat) { return cat == "cuda_runtime" || cat == "cuda_driver" || cat == "Runtime"; }
bool is_kernel(const std::string& cat) { return cat == "kernel" || cat == "Kernel"; }

using Dims = std::vector<int64_t>;

// One tensor argument as the trace records it.
struct Tensor {
  std::vector<int64_t> dims, strides;
  std::string type;

  int64_t rank() const { return int64_t(dims.size()); }
  int64_t dim(int64_t from_end) const { return dims[dims.size() - from_end]; }
  int64_t stride(int64_t from_end) const { return strides[strides.size() - from_end]; }
  // The last two dimensions; `swap` reads them as their transpose (a Linear's weight, N x K, as K x N).
  OperandView matrix(bool swap = false) const {
    if (swap) return {dim(1), dim(2), stride(1), stride(2)};
    return {dim(2), dim(1), stride(2), stride(1)};
  }
};

std::optional<std::vector<int64_t>> int_list(const Json& value) {
  if (!value.is_array()) return std::nullopt;
  std::vector<int64_t> out;
  for (const Json& v : value) {
    if (!v.is_number_integer()) return std::nullopt;
    out.push_back(v.get<int64_t>());
  }
  return out;
}

// Row-major strides of a contiguous tensor: what a trace without "Input Strides" is read as.
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * std::max<int64_t>(dims[i], 1);
  return s;
}

std::string dims_text(const std::vector<int64_t>& v) {
  std::string out;
  for (int64_t x : v) out += (out.empty() ? "" : ", ") + std::to_string(x);
  return "[" + out + "]";
}

// What one op maps to: problems, or the reason it cannot.
struct Mapping {
  std::vector<Problem> problems;
  bool rows_estimated = false;
  std::string reason;  // non-empty: unmapped
  std::vector<std::string> notes;
};

Mapping fail(std::string reason) {
  Mapping m;
  m.reason = std::move(reason);
  return m;
}

// One GEMM (or strided batched GEMM) from its two operands' matrices.
Mapping gemm_of(const OperandView& a, const OperandView& b, int64_t batch, DType dtype) {
  if (a.cols != b.rows)
    return fail(fmt::format("its operands do not multiply ([{}, {}] and [{}, {}])", a.rows, a.cols, b.rows, b.cols));
  for (int64_t size : {a.rows, a.cols, b.cols, batch}) {
    if (size == 0) return fail("a dimension is 0 (an empty GEMM launches nothing)");
    if (size < 0) return fail(fmt::format("a dimension is {}: negative, no tensor has such a size", size));
    if (size > kMaxSize) return fail(fmt::format("a dimension is {}, more than cuBLAS's 32-bit sizes allow", size));
  }
  const std::optional<OperandLayout> la = operand_layout(a), lb = operand_layout(b);
  if (!la || !lb) {
    const OperandView& bad = la ? b : a;
    return fail(fmt::format("{} has strides [{}, {}] for [{}, {}]: neither is a row-major nor a transposed matrix "
                            "(PyTorch copies it before the GEMM)",
                            la ? "B" : "A", bad.row_stride, bad.col_stride, bad.rows, bad.cols));
  }
  Problem p;
  p.m = a.rows;
  p.k = a.cols;
  p.n = b.cols;
  p.batch = batch;
  p.dtype = dtype;
  p.layout = la->transposed ? (lb->transposed ? Layout::kTT : Layout::kTN) : (lb->transposed ? Layout::kNT : Layout::kNN);
  p.lda = la->ld;
  p.ldb = lb->ld;
  p.ldc = p.n;
  Mapping m;
  m.problems.push_back(p);
  return m;
}

// The input dims, strides and types of an op's arguments; the reason when they are not there.
struct OpArgs {
  std::vector<std::optional<Tensor>> tensors;  // nullopt: not a tensor ([] dims, a scalar, a list)
  bool strides_recorded = true;
};

std::optional<OpArgs> read_args(const Json& args) {
  const auto dims = args.find("Input Dims");
  if (dims == args.end() || !dims->is_array()) return std::nullopt;
  const auto strides = args.find("Input Strides");
  const auto types = args.find("Input type");
  OpArgs out;
  out.strides_recorded = strides != args.end() && strides->is_array() && strides->size() == dims->size();
  for (size_t i = 0; i < dims->size(); ++i) {
    std::optional<std::vector<int64_t>> d = int_list((*dims)[i]);
    if (!d || d->empty()) {
      out.tensors.push_back(std::nullopt);
      continue;
    }
    Tensor t;
    t.dims = *d;
    std::optional<std::vector<int64_t>> s;
    if (out.strides_recorded) s = int_list((*strides)[i]);
    t.strides = s && s->size() == d->size() ? *s : contiguous_strides(*d);
    if (types != args.end() && types->is_array() && i < types->size() && (*types)[i].is_string())
      t.type = (*types)[i].get<std::string>();
    out.tensors.push_back(std::move(t));
  }
  return out;
}

// Multiplies the leading dimensions of a row-major-foldable operand into its rows, as matmul and
// linear do (a [B, T, K] input with strides [T*s, s, 1] is a [B*T, K] matrix with row stride s).
std::optional<OperandView> folded(const Tensor& t) {
  OperandView v = t.matrix();
  for (int64_t i = t.rank() - 2; i >= 1; --i) {
    if (t.dims[i - 1] != 1 && t.strides[i - 1] != t.strides[i] * t.dims[i]) return std::nullopt;
    v.rows *= t.dims[i - 1];
  }
  return v;
}

// A note when a batched operand's batch stride is not that of packed matrices.
void note_batch_stride(Mapping& m, const std::string& op, const char* name, const Tensor& t, const OperandView& v) {
  if (t.rank() != 3 || t.dims[0] == 1) return;
  const std::optional<OperandLayout> l = operand_layout(v);
  if (!l) return;
  const int64_t packed = (l->transposed ? v.cols : v.rows) * l->ld;
  if (t.strides[0] == 0) {
    m.notes.push_back(fmt::format("{}: {} broadcast over the batch (batch stride 0); its problem reads one {} per "
                                  "batch entry",
                                  op, name, name));
  } else if (t.strides[0] != packed) {
    m.notes.push_back(fmt::format("{}: {}'s batch stride {} is not that of packed matrices ({}); the problem packs them",
                                  op, name, t.strides[0], packed));
  }
}

// The n-th tensor argument, with at least `rank` dimensions.
const Tensor* tensor_arg(const OpArgs& args, size_t index) {
  return index < args.tensors.size() && args.tensors[index] ? &*args.tensors[index] : nullptr;
}

std::optional<DType> pair_dtype(const Tensor& a, const Tensor& b, std::string& reason) {
  return trace_pair_dtype(a.type, b.type, reason);  // model/trace_fp8.hpp
}

// Rows per group when a grouped call's offsets are not recorded: even, the remainder one row each
// to the first groups.
std::vector<int64_t> even_split(int64_t total, int64_t groups) {
  std::vector<int64_t> out(size_t(groups), total / groups);
  for (int64_t g = 0; g < total % groups; ++g) out[size_t(g)] += 1;
  return out;
}

// More groups than any MoE layer has experts (hundreds): a trace that says so is broken, and would
// have every group listed (a vector of billions of sizes).
constexpr int64_t kMaxGroups = 1 << 16;

Mapping map_grouped(const OpArgs& args) {
  const Tensor* a = tensor_arg(args, 0);
  const Tensor* b = tensor_arg(args, 1);
  const Tensor* offs = tensor_arg(args, 2);
  if (!a || !b) return fail("it has no two tensor inputs");
  std::string reason;
  const std::optional<DType> dtype = pair_dtype(*a, *b, reason);
  if (!dtype) return fail(reason);
  Mapping out;
  auto add = [&](const OperandView& av, const OperandView& bv) {
    Mapping one = gemm_of(av, bv, 1, *dtype);
    if (!one.reason.empty()) {
      out.reason = one.reason;
      return false;
    }
    out.problems.push_back(one.problems.front());
    return true;
  };
  const auto too_many = [](int64_t groups) { return fmt::format("{} groups (at most {})", groups, kMaxGroups); };
  if (a->rank() == 3 && b->rank() == 3) {  // [G, M, K] x [G, K, N]: every group known
    if (a->dims[0] != b->dims[0]) return fail(fmt::format("group counts differ ({} and {})", a->dims[0], b->dims[0]));
    if (a->dims[0] > kMaxGroups) return fail(too_many(a->dims[0]));
    for (int64_t g = 0; g < a->dims[0]; ++g)
      if (!add(a->matrix(), b->matrix())) return out;
    return out;
  }
  if (!offs || offs->rank() != 1) return fail("a 2-D operand without recorded offsets ('offs' dims)");
  const int64_t groups = offs->dims[0];
  if (groups < 1) return fail("0 groups");
  if (groups > kMaxGroups) return fail(too_many(groups));
  out.rows_estimated = true;
  if (a->rank() == 2 && b->rank() == 3) {  // [sum M, K] x [G, K, N]: MoE forward, rows per expert
    if (b->dims[0] != groups) return fail(fmt::format("{} offsets for {} groups", groups, b->dims[0]));
    for (int64_t rows : even_split(a->dim(2), groups)) {
      OperandView av = a->matrix();
      av.rows = rows;
      if (rows > 0 && !add(av, b->matrix())) return out;
    }
  } else if (a->rank() == 2 && b->rank() == 2) {  // [M, sum K] x [sum K, N]: MoE weight gradient, K per expert
    for (int64_t k : even_split(a->dim(1), groups)) {
      OperandView av = a->matrix(), bv = b->matrix();
      av.cols = bv.rows = k;
      if (k > 0 && !add(av, bv)) return out;
    }
  } else if (a->rank() == 3 && b->rank() == 2) {  // [G, M, K] x [K, sum N]
    for (int64_t n : even_split(b->dim(1), groups)) {
      OperandView bv = b->matrix();
      bv.cols = n;
      if (n > 0 && !add(a->matrix(), bv)) return out;
    }
  } else {
    return fail(fmt::format("operands of rank {} and {}", a->rank(), b->rank()));
  }
  if (out.problems.empty()) return fail("every group is empty");
  return out;
}

Mapping map_op(const std::string& op, const OpArgs& args) {
  if (op == "aten::_grouped_mm") return map_grouped(args);
  // Which arguments are A and B: addmm(bias, mat1, mat2), baddbmm(self, batch1, batch2); the rest lead with them.
  const size_t first = (op == "aten::addmm" || op == "aten::baddbmm") ? 1 : 0;
  const Tensor* a = tensor_arg(args, first);
  const Tensor* b = tensor_arg(args, first + 1);
  if (!a || !b) return fail("it has no two tensor inputs");
  std::string reason;
  if (op == "aten::_scaled_mm" && a->rank() == 2 && b->rank() == 2) {  // formats and recipe: model/trace_fp8.hpp
    const Tensor *sa = tensor_arg(args, 2), *sb = tensor_arg(args, 3);
    const std::optional<Fp8Recipe> recipe = scaled_mm_recipe(
        {a->type, b->type, a->dim(2), b->dim(1), a->dim(1), sa ? sa->dims : Dims{}, sb ? sb->dims : Dims{}}, reason);
    Mapping m = recipe ? gemm_of(a->matrix(), b->matrix(), 1, DType::kFp8) : fail(reason);
    for (Problem& p : m.problems) p.recipe = *recipe;
    return m;
  }
  const std::optional<DType> dtype = pair_dtype(*a, *b, reason);
  if (!dtype) return fail(reason);
  const bool batched_op = op == "aten::bmm" || op == "aten::baddbmm";
  if (batched_op) {
    if (a->rank() != 3 || b->rank() != 3) return fail(fmt::format("operands of rank {} and {}", a->rank(), b->rank()));
    if (a->dims[0] != b->dims[0]) return fail(fmt::format("batch sizes differ ({} and {})", a->dims[0], b->dims[0]));
    Mapping m = gemm_of(a->matrix(), b->matrix(), a->dims[0], *dtype);
    note_batch_stride(m, op, "A", *a, a->matrix());
    note_batch_stride(m, op, "B", *b, b->matrix());
    return m;
  }
  if (a->rank() < 2 || b->rank() < 2)
    return fail(fmt::format("a matrix-vector product (operands of rank {} and {})", a->rank(), b->rank()));
  if (op == "aten::linear") {  // input [..., K] @ weight.t(), weight [N, K]
    if (b->rank() != 2) return fail(fmt::format("a weight of rank {}", b->rank()));
    const std::optional<OperandView> av = folded(*a);
    if (!av) return fail(fmt::format("input strides {} for dims {} do not fold into a matrix", dims_text(a->strides),
                                     dims_text(a->dims)));
    return gemm_of(*av, b->matrix(true), 1, *dtype);
  }
  if (a->rank() == 2 && b->rank() == 2) return gemm_of(a->matrix(), b->matrix(), 1, *dtype);
  if (op != "aten::matmul") return fail(fmt::format("operands of rank {} and {}", a->rank(), b->rank()));
  if (b->rank() == 2) {  // [..., M, K] @ [K, N]: matmul folds the batch into M when the input allows it
    if (const std::optional<OperandView> av = folded(*a)) return gemm_of(*av, b->matrix(), 1, *dtype);
  }
  // Batched: the leading dimensions broadcast against each other.
  const int64_t lead = std::max(a->rank(), b->rank()) - 2;
  int64_t batch = 1;
  for (int64_t i = 0; i < lead; ++i) {
    const int64_t ia = a->rank() - 2 - lead + i, ib = b->rank() - 2 - lead + i;
    const int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    if (da != db && da != 1 && db != 1) return fail(fmt::format("batch dimensions {} and {} do not broadcast", da, db));
    batch *= std::max(da, db);
  }
  Mapping m = gemm_of(a->matrix(), b->matrix(), batch, *dtype);
  if (m.reason.empty() && (a->rank() != b->rank()))
    m.notes.push_back(fmt::format("{}: an operand broadcast over the batch (ranks {} and {}); its problem reads one "
                                  "matrix per batch entry",
                                  op, a->rank(), b->rank()));
  return m;
}

struct OpEvent {
  std::string name;
  double ts = 0, end = 0;
  const Json* args = nullptr;
  std::optional<int64_t> external_id;
  bool outer = false;  // another GEMM op ran inside it: that one is the call
};

// aten::linear calls aten::matmul or aten::addmm; aten::matmul calls aten::mm or aten::bmm.
int calling_rank(const std::string& op) {
  if (op == "aten::linear") return 0;
  if (op == "aten::matmul") return 1;
  return 2;
}

struct KernelSum {
  double us = 0;
  int64_t count = 0;
  std::vector<std::string> names;  // distinct, in trace order
};

struct KernelEvent {
  const Json* args = nullptr;
  double ts = 0, dur = 0;
  std::string name;
};

}  // namespace

std::optional<OperandLayout> operand_layout(const OperandView& v) {
  // PyTorch's prepare_matrix_for_cublas: the fast dimension has stride 1 and the other is at least
  // the length of a stored row (at least 1 for an empty one).
  if (v.col_stride == 1 && v.row_stride >= std::max<int64_t>(1, v.cols)) return OperandLayout{false, v.row_stride};
  if (v.row_stride == 1 && v.col_stride >= std::max<int64_t>(1, v.rows)) return OperandLayout{true, v.col_stride};
  return std::nullopt;
}

namespace {

// The trace's events: "traceEvents" of the object, or the bare array the format also allows.
const Json& trace_events(const Json& json, const std::string& origin) {
  if (json.is_object() && json.contains("traceEvents") && json["traceEvents"].is_array()) return json["traceEvents"];
  if (json.is_array()) return json;
  throw usage_error(fmt::format("{} is not a Chrome trace (no \"traceEvents\" array); {}", origin, kHowToRecord));
}

// What one pass over the events finds: GEMM ops per thread, launches, kernels, the profiler's step marks.
struct TraceScan {
  std::map<std::string, std::vector<OpEvent>> ops_by_thread;
  std::set<std::string> steps;
  std::unordered_map<int64_t, int64_t> external_of_correlation;  // from the launches
  std::vector<KernelEvent> kernels;
  bool any_kernel = false;
  double all_kernels_us = 0;  // every kernel's duration, linked to an op or not
};

// A GEMM op event as an OpEvent; nullopt when it has no start time.
std::optional<OpEvent> gemm_op(const Json& e, const std::string& name, const Json* args) {
  const std::optional<double> ts = number_of(e, "ts");
  if (!ts) return std::nullopt;
  OpEvent op;
  op.name = name;
  op.ts = *ts;
  op.end = *ts + number_of(e, "dur").value_or(0);
  op.args = args;
  if (args) op.external_id = id_of(*args, "External id");
  return op;
}

TraceScan scan_events(const Json& events) {
  TraceScan s;
  for (const Json& e : events) {
    if (!e.is_object() || text_of(e, "ph") != "X") continue;
    const std::string cat = text_of(e, "cat");
    const std::string name = text_of(e, "name");
    if (name.rfind("ProfilerStep#", 0) == 0) s.steps.insert(name);
    const auto args_it = e.find("args");
    const Json* args = args_it != e.end() && args_it->is_object() ? &*args_it : nullptr;
    if (is_kernel(cat)) {
      s.any_kernel = true;
      s.all_kernels_us += number_of(e, "dur").value_or(0);
      if (args) s.kernels.push_back({args, number_of(e, "ts").value_or(0), number_of(e, "dur").value_or(0), name});
    } else if (is_launch(cat) && args) {
      const std::optional<int64_t> corr = id_of(*args, "correlation"), ext = id_of(*args, "External id");
      if (corr && ext) s.external_of_correlation[*corr] = *ext;
    } else if (is_cpu_op(cat) && is_gemm_op(name)) {
      const std::optional<OpEvent> op = gemm_op(e, name, args);
      if (op) s.ops_by_thread[thread_of(e)].push_back(*op);
    }
  }
  return s;
}

// Each kernel's op (External id), through the launch's correlation or the kernel's own id: the kernel
// time per op, and every kernel in trace order for the step's timeline (its GEMM calls marked later).
struct LinkedKernels {
  std::unordered_map<int64_t, KernelSum> by_op;
  std::vector<TimelineKernel> in_order;
};
LinkedKernels link_kernels(const TraceScan& s) {
  LinkedKernels linked;
  std::unordered_map<int64_t, KernelSum>& out = linked.by_op;
  for (const KernelEvent& kernel : s.kernels) {
    std::optional<int64_t> ext;
    if (const std::optional<int64_t> corr = id_of(*kernel.args, "correlation")) {
      const auto it = s.external_of_correlation.find(*corr);
      if (it != s.external_of_correlation.end()) ext = it->second;
    }
    if (!ext) ext = id_of(*kernel.args, "External id");
    linked.in_order.push_back({kernel.ts, kernel.dur, kernel.name, std::nullopt, ext, id_of(*kernel.args, "correlation")});
    if (!ext) continue;
    KernelSum& k = out[*ext];
    k.us += kernel.dur;
    k.count += 1;
    if (std::find(k.names.begin(), k.names.end(), kernel.name) == k.names.end()) k.names.push_back(kernel.name);
  }
  return linked;
}

// The innermost GEMM op on each thread is the call: marks the others `outer` and returns the calls,
// in order of time (threads interleave, so trace order would not be first appearance).
std::vector<const OpEvent*> innermost_calls(std::map<std::string, std::vector<OpEvent>>& ops_by_thread) {
  for (auto& [thread, ops] : ops_by_thread) {
    // Each thread's ops in start order (a parent before a child that starts with it), with a stack
    // of the ops still open. Same start and end (a clock too coarse to separate them): the op that
    // calls the other first.
    std::sort(ops.begin(), ops.end(), [](const OpEvent& a, const OpEvent& b) {
      if (a.ts != b.ts) return a.ts < b.ts;
      if (a.end != b.end) return a.end > b.end;
      return calling_rank(a.name) < calling_rank(b.name);
    });
    std::vector<size_t> open;
    for (size_t i = 0; i < ops.size(); ++i) {
      while (!open.empty() && ops[i].ts >= ops[open.back()].end) open.pop_back();
      for (size_t parent : open) ops[parent].outer = true;
      open.push_back(i);
    }
  }
  std::vector<const OpEvent*> calls;
  for (const auto& [thread, ops] : ops_by_thread)
    for (const OpEvent& op : ops)
      if (!op.outer) calls.push_back(&op);
  std::stable_sort(calls.begin(), calls.end(), [](const OpEvent* a, const OpEvent* b) { return a->ts < b->ts; });
  return calls;
}

// What the calls were, for the notes and the no-shapes refusal.
struct CallTally { int64_t gemm_ops = 0, with_shapes = 0; bool strides_missing = false; };

// One call: mapped onto problems and added (its index in w.gemms returned), or counted as unmapped.
std::optional<size_t> add_call(Workload& w, const OpEvent& op, const std::unordered_map<int64_t, KernelSum>& kernels_of_op,
                               bool any_kernel, CallTally& tally) {
  ++tally.gemm_ops;
  KernelSum linked;
  std::optional<double> kernel_us;
  if (op.external_id) {
    const auto it = kernels_of_op.find(*op.external_id);
    if (it != kernels_of_op.end()) {
      linked = it->second;
      kernel_us = linked.us;
    }
  }
  const std::optional<OpArgs> args = op.args ? read_args(*op.args) : std::nullopt;
  if (!args) {
    w.add_unmapped(op.name, "no \"Input Dims\" (recorded without record_shapes=True)", kernel_us);
    return std::nullopt;
  }
  ++tally.with_shapes;
  if (!args->strides_recorded) tally.strides_missing = true;
  Mapping m = map_op(op.name, *args);
  if (!m.reason.empty()) {
    w.add_unmapped(op.name, m.reason, kernel_us);
    return std::nullopt;
  }
  if (any_kernel && linked.count == 0) {
    w.add_unmapped(op.name, "no GPU kernel is linked to it (CPU tensors, or a launch the trace lost)", kernel_us);
    return std::nullopt;
  }
  for (std::string& note : m.notes)
    if (std::find(w.notes.begin(), w.notes.end(), note) == w.notes.end()) w.notes.push_back(std::move(note));
  WorkloadGemm g;
  g.problems = std::move(m.problems);
  g.count = 1;
  g.origin = op.name;
  g.kernel_us = kernel_us;
  g.kernels = linked.count;
  g.kernel_names = std::move(linked.names);
  g.group_rows_estimated = m.rows_estimated;
  return w.add(std::move(g));
}

// What the trace could not say, as notes; a trace whose GEMM ops all lack shapes is refused.
void finish_notes(Workload& w, const TraceScan& s, const CallTally& tally, const std::string& origin) {
  if (tally.gemm_ops > 0 && tally.with_shapes == 0)
    throw usage_error(fmt::format("{} was recorded without shapes: its {} GEMM ops have no \"Input Dims\"; {}", origin,
                                  tally.gemm_ops, kHowToRecord));
  if (s.steps.size() > 1) {
    w.steps = int64_t(s.steps.size());
    w.notes.push_back(fmt::format("the trace holds {} profiler steps: the counts and times are those of all of them",
                                  s.steps.size()));
  }
  if (tally.gemm_ops == 0)
    w.notes.push_back(fmt::format("no GEMM op ({}) in the trace", "aten::mm, addmm, bmm, baddbmm, matmul, linear, "
                                                                  "_scaled_mm, _grouped_mm"));
  if (tally.strides_missing)
    w.notes.push_back("some GEMM ops have no \"Input Strides\" (PyTorch before 2.4, or concrete inputs not recorded): "
                      "their operands are read as contiguous, so a transposed view shows as nn");
  if (!s.any_kernel && tally.gemm_ops > 0)
    w.notes.push_back("no GPU kernels in the trace (recorded without ProfilerActivity.CUDA): no kernel times");
}

// Kineto writes the GPUs it saw: the times are that GPU's (its name and SM count).
void set_trace_device(const Json& json, Workload& w) {
  if (!json.is_object() || !json.contains("deviceProperties") || !json["deviceProperties"].is_array() ||
      json["deviceProperties"].empty() || !json["deviceProperties"][0].is_object())
    return;
  const Json& device = json["deviceProperties"][0];
  w.device = text_of(device, "name");
  const std::optional<double> sms = number_of(device, "numSms");
  if (sms && *sms >= 1 && *sms <= 1e6) w.device_sms = int(*sms);
}

}  // namespace

Workload parse_torch_trace(std::string_view text, const std::string& origin, const TraceImportOptions& options) {
  const Json json = parse_json_text(text, origin);
  const Json& events = trace_events(json, origin);
  TraceScan scan = scan_events(events);
  LinkedKernels kernels = link_kernels(scan);
  Workload w;
  w.source = origin;
  set_trace_device(json, w);
  w.recorded_clocks = read_recorded_clocks(json, w.notes);
  if (scan.any_kernel) w.all_kernels_us = scan.all_kernels_us;
  CallTally tally;
  std::unordered_map<int64_t, size_t> gemm_of_op;  // a call's External id -> its index in w.gemms
  for (const OpEvent* op : innermost_calls(scan.ops_by_thread))
    if (const std::optional<size_t> gemm = add_call(w, *op, kernels.by_op, scan.any_kernel, tally); gemm && op->external_id)
      gemm_of_op[*op->external_id] = *gemm;
  finish_notes(w, scan, tally, origin);
  for (TimelineKernel& k : kernels.in_order)
    if (const auto it = k.call ? gemm_of_op.find(*k.call) : gemm_of_op.end(); it != gemm_of_op.end()) k.gemm = it->second;
  w.casts = find_trace_casts(events, kernels.in_order, options.cast_range);
  w.timeline = build_timeline(std::move(kernels.in_order));
  return w;
}

Workload load_torch_trace(const std::string& path, const std::string& origin, const TraceImportOptions& options) {
  const std::string text = read_text_file(path, origin);
  // export_chrome_trace("x.json.gz") and tensorboard_trace_handler(use_gzip=True) write gzip.
  if (text.size() >= 2 && static_cast<unsigned char>(text[0]) == 0x1f && static_cast<unsigned char>(text[1]) == 0x8b)
    throw usage_error(fmt::format("{} is gzip-compressed; decompress it first (gunzip -k FILE)", origin));
  return parse_torch_trace(text, origin, options);
}

}  // namespace shapescope
