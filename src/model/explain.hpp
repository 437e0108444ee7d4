// `shapescope explain`: which sizes to compare a shape with, and what the comparison says — the
// verdict, the effects ranked by the time each costs, and the fix. Pure C++: it reads measured (or
// predicted) points, it measures nothing.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/numerics.hpp"
#include "core/paired_ratio.hpp"
#include "model/annotate.hpp"

namespace shapescope {

// Which dimensions of the shape move together: a square shape moves as one (n), a MxNxK shape
// moves each dimension that is not a multiple of 256 on its own (all of them when every one is).
enum class Dim { kAll, kM, kN, kK };
std::string_view dim_name(Dim dim);  // "n", "M", "N", "K"
int64_t dim_value(const Problem& problem, Dim dim);  // its M, N or K (kAll: N)

struct Candidate {
  Dim dim = Dim::kAll;
  int64_t value = 0;    // the new size of that dimension
  std::string why;      // "n-1", "multiple of 64 above", "fills its last wave", ...
  Problem problem;      // the shape with the dimension changed (the caller plans it)
};

// The neighbours of the issue: n-1, n+1, the nearest multiples of 8..256 strictly below and above,
// and (when the tile and slots are known) the nearest sizes whose tile grid needs one wave less or
// fills its last wave. Sizes below 1 are left out; each size once, with every reason it was chosen.
std::vector<Candidate> neighbours(const Problem& problem, bool square, const Annotation& target);

// Which side of a size to look: both (explain compares with smaller and larger sizes), or above
// only (pad: a padded size keeps the computation, so only a larger one can replace it).
enum class Side { kBoth, kAbove };
// The neighbours along one dimension, as neighbours() finds them for that dimension. kAbove keeps
// the nearest multiples of 8..256 above and the size that fills the last wave (n+1, the multiples
// below and "one wave less" are dropped). Sorted by size.
std::vector<Candidate> neighbours_along(const Problem& problem, Dim dim, const Annotation& target, Side side);

// What a point is in an explanation. The library's curve (target and size neighbours) is compared
// with controls that each change one thing and are measured the same way (DESIGN.md: "the model
// attributes; the controls prove").
enum class Role {
  kTarget,          // the shape as given, the library's own choice
  kNeighbour,       // a size neighbour, the library's own choice
  kFixedKernel,     // our kernel with one fixed tile and schedule, at the problem of point `of`
  kAligned16,       // the target with contiguous rows aligned to 16 bytes, base offsets 0 (library)
  kAligned32,       // the same with rows aligned to 32 bytes: one L2 sector (library)
  kCopy,            // copying the target's unaligned operands into the 16-byte layout and back
  kAlternative,     // one of cuBLASLt's heuristic algorithms at the target
  kNeighbourAlternative,  // one of cuBLASLt's heuristic algorithms at a neighbour
  kLaunchFloor,     // an empty kernel in the same timing harness
  kPrecision,       // the target's problem in another dtype (fp32 -> tf32, bf16, fp16; bf16/fp16 -> fp8 per recipe)
  kCast,            // an fp8 point's quantization of one operand (point `of`: the target or a kPrecision point)
};
std::string_view role_name(Role role);  // "target", "neighbour", "fixed kernel", ... (JSON keys)
// Whether paired passes compare a point of this role with the target: every role but the launch
// floor, the copy and the casts, whose own times place the target (a bound, a run-time copy, a cost
// paid beside the GEMM).
bool paired_role(Role role);

// One measured (or predicted) point of an explanation.
struct ExplainPoint {
  Role role = Role::kTarget;
  std::string label;            // "1793", "1792", "h3", "lda 1800"
  Candidate candidate;          // the target has why == "" and value == its own size
  std::optional<double> time_us;  // median; nullopt for a prediction
  // A performance model's time (model/perf_predict.hpp) where nothing was measured; the prediction's
  // size fixes then go by it instead of the tile model's relative cost.
  std::optional<double> predicted_us;
  double noise = 0;             // relative IQR of the samples
  std::string kernel;           // short name of the main kernel, "" when unknown
  std::string algo;             // the store's algo key ("default", "h3", our variant's key)
  std::optional<size_t> of;     // kFixedKernel: the index of the library point with the same problem;
                                // kCast: the fp8 point whose operand it quantizes
  bool per_call = true;         // kCast: every call pays it (an activation); false: once per step (a weight)
  Annotation annotation;
  // Measured in the same passes as the target (core/paired_ratio.hpp): its time over the target's,
  // with the interval; time_us is then the paired run's. The target's is 1 with no width.
  std::optional<PairedRatio> paired;
  // The target and kPrecision: its output against an fp64 reference of the same inputs, where measured:
  // on unit normal inputs, and on the same with outlier channels (core/numerics.hpp).
  std::optional<NumericalError> error;
  std::optional<NumericalError> error_outliers;

  std::optional<double> tflops() const { return annotation.roofline.tflops; }
};

// Whether p, measured, was left out of the paired passes that measured the target (points[0]): a
// point of a paired role without a paired ratio, where the target has one. Its time is of another
// moment than the target's (a survey's, model/explain_pairing.hpp), so explain() compares nothing
// with it.
bool left_out_of_pairing(const ExplainPoint& target, const ExplainPoint& p);

// The causes of a gap, each with the time it costs the target (no English: report/ words them).
enum class EffectKind {
  kLayout,            // strides or offsets of a view: the same shape contiguous and aligned runs faster
  kAlignment16,       // rows not 16-byte aligned: the library's TMA/fast kernels are locked out
  kSector32,          // rows 16- but not 32-byte aligned: each row touches one more 32-byte sector
  kSizeAlignment,     // a row length (K, N of nn) not a multiple of 16 bytes: the library keeps its
                      // align1/align2 kernels even with aligned rows (the 16-byte control shows it)
  kHeuristicRegret,   // another of the library's own algorithms runs this very problem faster
  kWaveQuantization,  // the last wave of tiles leaves slots idle (model, proven by the fixed kernel)
  kTileQuantization,  // partial edge tiles compute padding (model, proven by the fixed kernel)
  kKernelChoice,      // the library runs a slower kernel here than at the neighbour; a fixed kernel does not slow down
  kPrecision,         // an fp32 (or tf32) GEMM: the same GEMM in a tensor-core precision (bf16, ...) runs faster
  kUnexplained,       // measured, but no control or model term accounts for it
};
std::string_view effect_name(EffectKind kind);  // "layout", "16-byte alignment", ...

// The points an effect rests on, by what each is to it (indices into the explanation's points), so
// that a report reads only what is there. `state` pays the cost: the target, or the same-work control
// that ran it fastest. `against` does not: the control or neighbour it is measured against, or, in a
// prediction, the neighbour the model predicts better in that term (none: the target's own figure).
// Our fixed kernel at the problems of both, where it ran; `also`: further points that show it (the
// copy for the layout, the layout controls for the library's part).
struct Evidence {
  size_t state = 0;
  std::optional<size_t> against;
  std::optional<size_t> fixed_state, fixed_against;
  std::vector<size_t> also;
  bool fixed() const { return fixed_state && fixed_against; }
  // Every point named, each once, in the order above (the JSON's list).
  std::vector<size_t> indices() const;
};

struct Effect {
  EffectKind kind = EffectKind::kUnexplained;
  double cost_us = 0;             // time it costs the target (0 for a prediction's context)
  bool measured = true;           // a control measured it; false: the model computed it
  Evidence evidence;
  // kUnexplained: whether the fixed kernel shows it too (the shape) or only the library does.
  bool in_fixed_kernel = false;
};

enum class Bound { kCompute, kMemory, kLaunch, kUnknown };
std::string_view bound_name(Bound bound);

enum class VerdictKind {
  kSlower,       // a neighbour or a control runs the work clearly faster
  kFast,         // nothing measured shows more than the noise to gain
  kMemoryBound,  // bytes, not FLOPs, set the time
  kLaunchBound,  // launch and latency set the time: near the empty-kernel floor, far from both roofs
  kPrediction,   // nothing measured: the model's view
  kUnjudged,     // the target is measured, but no neighbour or control to compare it with
};

struct Verdict {
  VerdictKind kind = VerdictKind::kFast;
  std::optional<size_t> against;  // the point compared with (a neighbour or a same-work control)
  double time_ratio = 1;          // target time / its time
  double work_ratio = 1;          // its FLOPs / the target's
  double throughput_ratio = 1;    // its TFLOP/s / the target's
  double gap_us = 0;              // target time minus the time at the best throughput measured
  double unexplained_us = 0;      // the part of the gap no effect accounts for
  double threshold = 0;           // relative difference below which two times are the same
  Bound bound = Bound::kUnknown;
  std::optional<size_t> floor;    // the launch-floor point
  double roof_us = 0;             // the time at the roofline (compute or bandwidth, the larger)
};

// The absolute yardsticks of a "fast" verdict.
struct Reference {
  std::optional<size_t> best_aligned;  // the library point with the best TFLOP/s among 16-byte-aligned ones
  std::optional<double> regret;        // cuBLASLt: the first choice's time over the best alternative's, minus 1
  std::optional<size_t> best_alternative;
  std::optional<double> fixed_loss;    // the fixed kernel's loss at the target against the compared neighbour
};

// kPadAtRunTime: He's "why doesn't the kernel just pad?": copy the operands into zero-padded buffers
// of the next aligned size, run that GEMM, copy C back (the copy measured, the GEMM a neighbour).
// kPrecision: run it in another dtype (the point's), at the numerical error measured with it.
enum class FixKind { kPadUp, kShrink, kAlignLayout, kAlignSector, kAlgorithm, kBatchMore, kPadAtRunTime, kPrecision, kLeave };
struct Fix {
  FixKind kind = FixKind::kLeave;
  std::optional<size_t> point;    // the point the target would become
  std::optional<size_t> copy;     // kAlignLayout, kPadAtRunTime: the copy that padding at run time adds
  // What the target would then take (the copy, an fp8 GEMM's per-call casts included); nullopt for a
  // prediction, whose points have no times.
  std::optional<double> time_us;
  double casts_us = 0;            // kPrecision to fp8: the casts every call pays (in time_us)
  double per_step_us = 0;         // kPrecision to fp8: the casts paid once per step (a weight's), not in time_us
  double speedup = 1;             // target time / time_us; a prediction: the model's efficiency ratio
  double extra_flops = 0;         // relative: +0.012 = 1.2 % more FLOPs (negative when smaller)
  double extra_bytes = 0;         // relative operand memory
};

// What an fp8 GEMM's shape does to its recipe (model/explain_fp8.hpp): computed from the shape and
// the recipe, and measured where the neighbour that shows it was measured.
enum class Fp8CauseKind {
  kSmallM,          // M below 128 under block scaling: the block-scaled kernels' tiles run mostly empty
  kPartialBlock,    // M or N not a multiple of 128 under block scaling: partial tiles and scale blocks
  kScaleLayoutPad,  // K/128 not a multiple of 4: the 128x128 scales' K blocks are padded to a multiple of 4
};
struct Fp8Cause {
  Fp8CauseKind kind = Fp8CauseKind::kSmallM;
  Dim dim = Dim::kM;               // kSmallM, kPartialBlock: the dimension
  int64_t value = 0;               // its size (kScaleLayoutPad: K / 128)
  int64_t block_size = 0;          // the size that fills the block (kScaleLayoutPad: the padded K blocks)
  std::optional<size_t> evidence;  // the measured neighbour at block_size
  double cost_us = 0;              // measured: the target's time over what it takes at the neighbour's throughput
};

struct Explanation {
  Verdict verdict;
  Reference reference;
  std::vector<Effect> effects;    // in the order of the attribution (same-work controls first), no zero costs
  std::vector<Fix> fixes;         // the fastest first; empty: leave it
  std::vector<Fp8Cause> fp8;      // an fp8 target's shape against its recipe's blocks
};

// points[0] is the target (Role::kTarget); the rest are neighbours and controls in any order.
// Measured points need a time; a prediction (no times) gets the model's view, labelled as such.
// Attribution: the same-work controls (16-byte layout, 32-byte rows, the best cuBLASLt alternative)
// each take what they gain over the best time reached before them; the rest of the gap to the
// compared neighbour (at the target's work) is split by the fixed kernel: what it loses too is the
// shape's (waves and tiles as the model predicts them for its tile, the rest unexplained), what it
// does not lose is the library's kernel choice. The effects add up to the gap.
// Precision comes last and on its own: for a GEMM that stores fp32 (fp32, tf32), the fastest
// kPrecision point takes what it gains over the best time the same precision reached (the target,
// a same-work control or the compared neighbour at the target's work) and becomes the verdict's
// comparison; the other controls never mix precisions. A 16-bit GEMM's fp8 control is a fix only
// (fp8 needs scaling a program must add; bf16 is where mixed precision puts a GEMM, not a cause).
// An fp8 fix is priced with its casts: the per-call ones (kCast points of it with per_call) are in its
// time, a weight's once-per-step ones beside it (Fix::per_step_us).
// With a paired target, points left out of its passes (left_out_of_pairing) are read as not timed:
// no verdict, effect, fix or yardstick rests on them.
Explanation explain(const std::vector<ExplainPoint>& points);


// The dtypes explain measures the target in besides its own, on a GPU of this compute capability
// (major*10+minor): fp32 -> tf32, bf16, fp16; tf32 -> bf16, fp16; bf16 and fp16 -> fp8 where the GPU
// has fp8 (8.9+) and the layout is one of a Linear layer's (nt forward, nn input gradient, tn weight
// gradient: the operands' roles that decide the recipe and which casts a step pays per call); fp8 and
// grouped calls: none. cuBLASLt's fp8 takes nt only: the fp8 point of an nn or tn GEMM is its nt form,
// with casts that transpose (model/explain_fp8.hpp).
std::vector<DType> precision_dtypes(const Problem& target, int compute_capability);
// Whether a faster precision is a cause in the verdict for a GEMM of this dtype (fp32, tf32), not
// only a fix.
bool precision_is_cause(DType dtype);

// Parses "1793" (square: M = N = K) or "4096x1x4096"; nullopt for anything else.
struct ShapeArg {
  int64_t m = 0, n = 0, k = 0;
  bool square = false;
};
std::optional<ShapeArg> parse_shape(std::string_view text);
// "BMxBN" for --tile, e.g. "256x128".
std::optional<std::pair<int, int>> parse_tile(std::string_view text);

}  // namespace shapescope
