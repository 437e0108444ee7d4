// From the sweep's shape options to the list of problems to measure.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/fp8_recipe.hpp"
#include "core/problem.hpp"

namespace shapescope {

// The largest --ld-pad and --offset, in elements, for a sweep and for every view that selects or
// explains points: cuBLAS takes a leading dimension as a 32-bit int, and an offset beyond one is no
// slice of a tensor any GEMM reads (it would also need more memory than any GPU has).
constexpr int64_t kMaxStrideOption = 2147483647;

struct ShapeOptions {
  std::string m, n, k;          // ranges; empty = not given. Missing dims follow the first given.
  std::string batch = "1";      // a range too
  std::string dtype = "bf16";
  std::string layout = "nn";
  std::string recipe;           // fp8's recipe (core/fp8_recipe.hpp); empty: tensor
  int64_t ld_pad = 0;                   // elements added to every leading dimension
  std::optional<int64_t> lda, ldb, ldc; // explicit leading dimensions (not with ld_pad)
  int64_t offset = 0;                   // base-pointer offset of A and B, in elements
};

// A problem's form besides its sizes, typed and checked: what explain's target and each of its
// neighbours share, so that a neighbour is planned from numbers, nothing formatted and read again.
struct ProblemForm {
  DType dtype = DType::kBf16;
  Layout layout = Layout::kNN;
  Fp8Recipe recipe;                      // fp8 only
  int64_t batch = 1;
  int64_t ld_pad = 0;                    // elements added to every leading dimension
  std::optional<int64_t> lda, ldb, ldc;  // explicit leading dimensions (not with ld_pad)
  int64_t offset = 0;                    // base-pointer offset of A and B, in elements
  std::string sizes_from = "SHAPE";      // what gave the sizes, for messages: "SHAPE", "--m, --n"
};

// The product of the ranges, in order m (outer) .. n .. k .. batch (inner).
// Throws Error(kUsage) naming the option and value for anything invalid: no dimension given,
// a malformed range, ld smaller than the stored row length (names the first point it fails at),
// negative padding or offset, or one above kMaxStrideOption, unknown dtype, layout or recipe, a recipe
// for a dtype other than fp8.
std::vector<Problem> plan_problems(const ShapeOptions& options);

// One size in the options' form (explain's SHAPE, plot tilegrid's), refused as plan_problems refuses
// a plan of it (options.m, n and k are not read; `sizes_from` names the sizes in messages): one problem
// per batch value, and the form, its batch the first one.
struct SizePlan {
  std::vector<Problem> problems;
  ProblemForm form;
};
SizePlan plan_size(const ShapeOptions& options, int64_t m, int64_t n, int64_t k, const std::string& sizes_from);

// The form's own rules: fp8 takes layout nt; the padding, leading dimensions and offset within their
// ranges; padding and an explicit leading dimension not both. Error(kUsage) naming the option.
void check_form(const ProblemForm& form);
// The problem of these sizes in this form (its leading dimensions and offsets); Error(kUsage) naming
// the options for a leading dimension smaller than its row or beyond cuBLAS's int, or operands no GPU
// could hold.
Problem form_problem(const ProblemForm& form, int64_t m, int64_t n, int64_t k);

// One of `count` interleaved parts of a plan: every count-th problem from the index-th (1-based).
struct Shard {
  int64_t index = 1, count = 1;
};
// "2/8" as a Shard; Error(kUsage) naming `option` for anything but I/N with 1 <= I <= N.
Shard parse_shard(const std::string& text, const std::string& option = "--shard");
// The plan positions the shard takes: index-1, index-1+count, ... below plan_size. The shards
// 1/N..N/N of a plan take every position exactly once.
std::vector<size_t> shard_positions(size_t plan_size, const Shard& shard);

// "2/8": the second of eight interleaved parts of the plan (every 8th problem from the 2nd), for a
// job array; an empty text is the whole plan. Throws Error(kUsage) naming --shard for anything else.
std::vector<Problem> take_shard(const std::vector<Problem>& problems, const std::string& shard);

}  // namespace shapescope
