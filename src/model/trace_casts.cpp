#include "model/trace_casts.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <unordered_set>
#include <utility>

#include "model/trace_json.hpp"

namespace shapescope {
namespace {

using Json = nlohmann::json;
using namespace trace_json;

// Transformer Engine's fp8 quantization kernels, by the name of their __global__ function, from
// github.com/NVIDIA/TransformerEngine (transformer_engine/common/, read at commit d0067d0, 2026-08):
// `te_namespace`: the name must also hold "transformer_engine::" (a name too plain to be TE's alone).
// Kernels that fuse a cast with another op's work (cast_transpose_fusion.cu's bias gradient and
// activation kernels, the vectorized unary_kernel that also runs activations) are not listed: their
// time is not the cast's alone.
struct KnownCast {
  std::string_view name;
  bool te_namespace;
};
constexpr KnownCast kKnownCasts[] = {
    {"cast_transpose_general_kernel", false},                  // transpose/cast_transpose.cu
    {"cast_transpose_optimized_kernel", false},                // transpose/rtc/cast_transpose.cu (NVRTC)
    {"multi_cast_transpose_kernel", false},                    // transpose/multi_cast_transpose.cu
    {"block_scaled_cast_transpose_kernel", false},             // transpose/quantize_transpose_square_blockwise.cu
    {"block_scaled_cast_transpose_kernel_notaligned", false},  // (128x128 blocks)
    {"block_scaled_1d_cast_transpose_kernel", false},          // transpose/quantize_transpose_vector_blockwise.cu
    {"cast_fp8_1D_kernel", false},                             // cast/fp8/quantize_fp8.cuh
    {"cast_fp8_2D_kernel", false},
    {"fp8_block_scaling_compute_partial_amax_kernel", false},  // recipe/fp8_block_scaling.cu
    {"fp8_block_scaling_partial_cast_kernel", false},
    {"compute_scale_from_amax_kernel", true},                  // recipe/current_scaling.cu
    {"amax_kernel", true},
    {"zero_amax_kernel", true},
    {"amax_and_scale_update_impl", true},                      // recipe/delayed_scaling.cu (its namespace)
};

bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `word` in `text` as a whole identifier (not a part of a longer one).
bool has_identifier(std::string_view text, std::string_view word) {
  for (size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    const size_t end = at + word.size();
    if ((at == 0 || !identifier_char(text[at - 1])) && (end == text.size() || !identifier_char(text[end]))) return true;
  }
  return false;
}

// The CPU-side events a range can hold (record_function writes "user_annotation"; older profilers
// "cpu_op"); the GPU's "gpu_user_annotation" copy of the range is no CPU op.
bool cpu_side(const std::string& cat) { return cat == "user_annotation" || is_cpu_op(cat); }

struct Span {
  double start = 0, end = 0;
};

// A thread's ranges, by start, with the latest end so far: ranges on one thread nest or follow each
// other, so an op lies inside one when the latest end among those that started before it reaches its end.
struct ThreadRanges {
  std::vector<Span> spans;
  std::vector<double> end_so_far;
  void close() {
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
    double end = -1e300;
    for (const Span& s : spans) end_so_far.push_back(end = std::max(end, s.end));
  }
  bool holds(const Span& op) const {
    const auto after = std::upper_bound(spans.begin(), spans.end(), op.start,
                                        [](double t, const Span& s) { return t < s.start; });
    return after != spans.begin() && end_so_far[size_t(after - spans.begin()) - 1] >= op.end;
  }
};

// An id in an event's args: an op's "External id", a launch's "correlation".
std::optional<int64_t> arg_id(const Json& e, const char* key) {
  const auto args = e.find("args");
  return args != e.end() && args->is_object() ? id_of(*args, key) : std::nullopt;
}

// What the ranges hold: the External ids of the ops inside them (the ranges' own among them), and the
// correlation ids of the launches made inside them. A launch made in a range outside any op (a kernel
// called through ctypes, or a Triton kernel launched from Python) carries the id of the op around the
// range, if any, not the range's: it is inside by its time on the range's thread.
struct RangeContents {
  std::unordered_set<int64_t> ops, launches;
};
RangeContents ops_inside(const Json& events, const std::string& range, int64_t& ranges) {
  std::map<std::string, ThreadRanges> by_thread;
  RangeContents contents;
  std::unordered_set<int64_t>& inside = contents.ops;
  const auto span_of = [](const Json& e) -> std::optional<Span> {
    const std::optional<double> ts = number_of(e, "ts");
    if (!ts) return std::nullopt;
    return Span{*ts, *ts + number_of(e, "dur").value_or(0)};
  };
  for (const Json& e : events) {
    if (!e.is_object() || text_of(e, "ph") != "X" || !cpu_side(text_of(e, "cat")) || text_of(e, "name") != range)
      continue;
    const std::optional<Span> span = span_of(e);
    if (!span) continue;
    ++ranges;
    by_thread[thread_of(e)].spans.push_back(*span);
    if (const std::optional<int64_t> id = arg_id(e, "External id")) inside.insert(*id);
  }
  if (ranges == 0) return contents;
  for (auto& [thread, spans] : by_thread) spans.close();
  for (const Json& e : events) {
    if (!e.is_object() || text_of(e, "ph") != "X") continue;
    const std::string cat = text_of(e, "cat");
    const bool launch = cat == "cuda_runtime" || cat == "cuda_driver";
    if (!launch && !cpu_side(cat)) continue;
    const std::optional<int64_t> id = arg_id(e, launch ? "correlation" : "External id");
    const std::optional<Span> span = span_of(e);
    if (!id || !span) continue;
    const auto it = by_thread.find(thread_of(e));
    if (it != by_thread.end() && it->second.holds(*span)) (launch ? contents.launches : inside).insert(*id);
  }
  return contents;
}

// `known`: the cited kernel its name matched (found by name), listed once.
void add_kernel(TraceCasts& casts, const TimelineKernel& k, std::optional<std::string_view> known = std::nullopt) {
  ++casts.kernels;
  casts.kernel_us += k.dur;
  if (known && std::find(casts.kernel_names.begin(), casts.kernel_names.end(), *known) == casts.kernel_names.end())
    casts.kernel_names.emplace_back(*known);
}

}  // namespace

std::string_view to_string(CastsFoundBy by) {
  switch (by) {
    case CastsFoundBy::kRange: return "range";
    case CastsFoundBy::kKernelNames: return "kernel names";
    case CastsFoundBy::kNone: break;
  }
  return "none";
}

std::optional<std::string_view> known_cast_kernel(std::string_view kernel_name) {
  const bool te = kernel_name.find("transformer_engine::") != std::string_view::npos;
  for (const KnownCast& known : kKnownCasts)
    if ((te || !known.te_namespace) && has_identifier(kernel_name, known.name)) return known.name;
  return std::nullopt;
}

TraceCasts find_trace_casts(const Json& events, const std::vector<TimelineKernel>& kernels, const std::string& range) {
  TraceCasts casts;
  casts.range = range;
  const RangeContents inside = ops_inside(events, range, casts.ranges);
  if (casts.ranges > 0) {
    casts.found_by = CastsFoundBy::kRange;
    for (const TimelineKernel& k : kernels)
      if (!k.gemm && ((k.call && inside.ops.count(*k.call)) ||
                      (k.correlation && inside.launches.count(*k.correlation))))
        add_kernel(casts, k);
    return casts;
  }
  for (const TimelineKernel& k : kernels)
    if (const std::optional<std::string_view> known = k.gemm ? std::nullopt : known_cast_kernel(k.name))
      add_kernel(casts, k, known);
  if (casts.kernels > 0) casts.found_by = CastsFoundBy::kKernelNames;
  return casts;
}

}  // namespace shapescope
