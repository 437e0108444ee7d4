// One matrix multiplication to measure: C[M,N] = A[M,K] @ B[K,N] (row-major, as in PyTorch),
// with its dtype, layout, leading dimensions and pointer offsets. Pure C++, no CUDA.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/fp8_recipe.hpp"

namespace shapescope {

enum class DType { kBf16, kFp16, kFp32, kTf32, kFp8 };

// nn: A is M x K, B is K x N (torch.mm(a, b)); nt: B is stored N x K (x @ W.t());
// tn: A is stored K x M; tt: both stored transposed.
enum class Layout { kNN, kNT, kTN, kTT };

std::string_view to_string(DType dtype);
std::string_view to_string(Layout layout);
std::optional<DType> parse_dtype(std::string_view text);
std::optional<Layout> parse_layout(std::string_view text);
// An option's value as a dtype or layout: Error(kUsage) naming the option (--dtype, --layout) and the
// value otherwise. Every command's --dtype and --layout are read through these.
DType dtype_option(std::string_view text);
Layout layout_option(std::string_view text);

// Bytes of one element of A and B (fp8: 1, bf16/fp16: 2, fp32/tf32: 4).
int input_bytes(DType dtype);
// Bytes of one element of C (fp8 GEMMs write bf16).
int output_bytes(DType dtype);
// The lowest compute capability (major*10+minor) whose tensor cores run the dtype through cuBLAS
// (plain C++, so that the views can choose what a GPU can run without CUDA's headers).
int min_compute_capability(DType dtype);

// One GEMM of a grouped call (see Problem::groups): its sizes and leading dimensions; the dtype and
// layout are the grouped problem's.
struct GroupShape {
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  bool operator==(const GroupShape& other) const;
};

struct Problem {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  DType dtype = DType::kBf16;
  Layout layout = Layout::kNN;
  int64_t lda = 0, ldb = 0, ldc = 0;       // leading dimensions, in elements
  int64_t off_a = 0, off_b = 0, off_c = 0;  // base-pointer offsets, in elements
  // A grouped call (cublasGemmGroupedBatchedEx; an MoE layer's experts, torch._grouped_mm): one GEMM
  // per entry, all of this dtype and layout. m, n, k and lda, ldb, ldc above are then the first
  // group's, batch is 1 and the offsets 0. Each group's operands follow the previous group's in the
  // buffers, each start rounded up to 16 bytes (as separate allocations, or the rows of one tensor
  // whose row length is a multiple of 16 bytes, would be). Empty: an ordinary (or strided batched) GEMM.
  std::vector<GroupShape> groups;
  // fp8 only: how the operands are scaled and which 8-bit format each holds (core/fp8.hpp). Other
  // dtypes keep the default, which their keys do not name.
  Fp8Recipe recipe;
  // A quantization, not a GEMM (backend "cast", core/fp8.hpp's cast_problem): which operand of the
  // fp8 GEMM described by the other fields it writes.
  CastOperand cast = CastOperand::kNone;

  bool grouped() const { return !groups.empty(); }

  bool a_transposed() const { return layout == Layout::kTN || layout == Layout::kTT; }  // A stored K x M
  bool b_transposed() const { return layout == Layout::kNT || layout == Layout::kTT; }  // B stored N x K

  // Rows and columns of each operand as stored (row-major), before the leading-dimension padding.
  int64_t a_rows() const { return a_transposed() ? k : m; }
  int64_t a_cols() const { return a_transposed() ? m : k; }
  int64_t b_rows() const { return b_transposed() ? n : k; }
  int64_t b_cols() const { return b_transposed() ? k : n; }

  // Elements between consecutive matrices of a batch (strided batched GEMM).
  int64_t stride_a() const { return a_rows() * lda; }
  int64_t stride_b() const { return b_rows() * ldb; }
  int64_t stride_c() const { return m * ldc; }

  // Elements each operand's buffer must hold, the offset included (a grouped call: every group's).
  int64_t a_span() const;
  int64_t b_span() const;
  int64_t c_span() const;
  // Where group g's operands start in the buffers, in elements (0 for group 0).
  int64_t group_a_start(size_t g) const;
  int64_t group_b_start(size_t g) const;
  int64_t group_c_start(size_t g) const;
  // Group g as an ordinary problem (its own sizes and leading dimensions, the dtype and layout).
  Problem group(size_t g) const;
  // Device bytes of the three operands.
  int64_t bytes() const {
    return (a_span() + b_span()) * input_bytes(dtype) + c_span() * output_bytes(dtype);
  }

  // 2MNK x batch; a grouped call: the sum over its groups; a cast: 0 (its n or m is 0).
  double flops() const;
  // "4096x4096x4096", "4096x4096x4096 (batch 8)", "grouped 8 x 1025..1026x28672x4096"; a cast
  // "cast A 4096x7168" (its output's rows x K; "from K x rows" when it transposes).
  std::string shape_string() const;

  bool operator==(const Problem& other) const;
};

// A hash of everything operator== compares: lists of calls and points are matched by problem in
// hash tables, so that a workload of 200,000 GEMMs is not compared pair by pair.
size_t hash_value(const Problem& problem);
struct ProblemHash {
  size_t operator()(const Problem& problem) const { return hash_value(problem); }
};

// The same GEMM with contiguous, aligned operands: each leading dimension the smallest multiple of
// `row_bytes` bytes that holds its row (the packed one when that is already a multiple), base
// offsets 0 (allocations are 256-byte aligned). explain's layout controls: 16 bytes (TMA and the
// libraries' fast kernels) and 32 bytes (one L2 sector).
Problem aligned_layout(const Problem& problem, int row_bytes);
// Whether an operand's rows or base pointer are not `bytes`-aligned: it would have to be copied into
// the aligned layout (a what-if of padding at run time).
struct OperandCopies {
  bool a = false, b = false, c = false;
  bool any() const { return a || b || c; }
};
OperandCopies unaligned_operands(const Problem& problem, int bytes);

// One grouped call from its groups' problems (each unbatched, without offsets, all of one dtype and
// layout); a single problem stays as it is. Throws Error(kInternal) for problems that cannot group.
Problem grouped_problem(const std::vector<Problem>& groups);

// The groups as the store keys them: "" for an ordinary problem, else "MxNxK/lda/ldb/ldc" per group
// joined by ';'. parse_groups reads that back (nullopt for anything malformed).
std::string groups_text(const Problem& problem);
std::optional<std::vector<GroupShape>> parse_groups(std::string_view text);

}  // namespace shapescope
