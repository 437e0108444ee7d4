// `shapescope explain`: which sizes to compare a shape with, and what the comparison says — the
// verdict, the effects ranked by the time each costs, and the fix. Pure C++: it reads measured (or
// predicted) points, it measures nothing.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/annotate.hpp"

namespace shapescope {

// Which dimensions of the shape move together: a square shape moves as one (n), a MxNxK shape
// moves each dimension that is not a multiple of 256 on its own (all of them when every one is).
enum class Dim { kAll, kM, kN, kK };
std::string_view dim_name(Dim dim);  // "n", "M", "N", "K"

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

// One measured (or predicted) point of an explanation.
struct ExplainPoint {
  std::string label;            // "1793" (target), "1792 (n-1)"
  Candidate candidate;          // the target has why == "" and value == its own size
  std::optional<double> time_us;  // median; nullopt for a prediction
  double noise = 0;             // relative IQR of the samples
  std::string kernel;           // short name of the main kernel, "" when unknown
  Annotation annotation;

  std::optional<double> tflops() const { return annotation.roofline.tflops; }
};

struct Effect {
  std::string name;     // "alignment", "kernel switch", "wave quantization", "tile quantization",
                        // "heuristic regret", "memory bound", "unexplained"
  double cost_us = 0;   // time it costs the target (0 where it is context, not a cost)
  std::string detail;   // one sentence with the numbers
};

struct Fix {
  ExplainPoint point;           // the recommended size
  double speedup = 1;           // target time / its time
  double extra_flops = 0;       // relative: +0.012 = 1.2 % more FLOPs (negative when smaller)
  double extra_bytes = 0;       // relative operand memory
};

struct Explanation {
  std::string verdict;                 // the first line
  std::optional<ExplainPoint> compared_with;  // the neighbour the verdict names
  std::vector<Effect> effects;         // by cost, largest first
  std::optional<Fix> fix;              // nullopt: leave it
  std::string fix_text;                // one or two sentences
};

// points[0] is the target; the rest are its neighbours. Measured points need a time; a prediction
// (no times) gets a verdict from the model alone, labelled as such.
Explanation explain(const std::vector<ExplainPoint>& points);

// Parses "1793" (square: M = N = K) or "4096x1x4096"; nullopt for anything else.
struct ShapeArg {
  int64_t m = 0, n = 0, k = 0;
  bool square = false;
};
std::optional<ShapeArg> parse_shape(std::string_view text);
// "BMxBN" for --tile, e.g. "256x128".
std::optional<std::pair<int, int>> parse_tile(std::string_view text);

}  // namespace shapescope
