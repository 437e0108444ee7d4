// A GEMM list as a workload: for JAX, Megatron or hand-made lists of the GEMMs a program runs. Pure C++.
//
// CSV with a header line, or JSON (an array of objects, or {"gemms": [...]}); the same columns:
//   required  m, n, k, layout (nn/nt/tn/tt), dtype (bf16/fp16/fp32/tf32/fp8), batch, count
//   optional  lda, ldb, ldc (default: packed), offset_a, offset_b (elements, default 0),
//             name (where it comes from), group (rows with the same group run as one grouped call,
//             one problem per row in row order, e.g. the experts of an MoE layer; they share a count)
// CSV: comma-separated, a field may be double-quoted; blank lines and lines starting with '#' are
// skipped. Identical rows merge (counts add).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include "model/workload.hpp"

namespace shapescope {

// Rows a list may hold. A list of a million distinct GEMMs is read and profiled from a store in
// seconds (calls merge through a hash); past it, a list is almost surely a generated mistake.
constexpr size_t kMaxListRows = 1'000'000;

// Throws usage_error with one line starting with `origin` and naming the line (CSV) or entry
// (JSON) and the column: malformed or truncated JSON, a missing required value, an unknown or
// repeated column, a value that is not an integer in range (sizes 1..2^31-1, offsets 0..2^31-1),
// an unknown layout or dtype, a leading dimension shorter than its row, a group whose rows
// disagree on count or dtype, an empty list, more than kMaxListRows rows.
Workload parse_gemm_list(std::string_view text, const std::string& origin);
// The same from a file; also throws usage_error when it cannot be read.
Workload load_gemm_list(const std::string& path, const std::string& origin);

}  // namespace shapescope
