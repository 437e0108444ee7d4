#include "core/problem.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"

namespace shapescope {

namespace {

// Reached only if an enum holds a value outside its enumerators, which is a bug, not bad input.
[[noreturn]] void unknown_enum(const char* what, int value) {
  throw Error(ExitCode::kInternal, fmt::format("internal error: unknown {} value {}", what, value));
}

}  // namespace

std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::kBf16: return "bf16";
    case DType::kFp16: return "fp16";
    case DType::kFp32: return "fp32";
    case DType::kTf32: return "tf32";
    case DType::kFp8: return "fp8";
  }
  unknown_enum("DType", static_cast<int>(dtype));
}

std::string_view to_string(Layout layout) {
  switch (layout) {
    case Layout::kNN: return "nn";
    case Layout::kNT: return "nt";
    case Layout::kTN: return "tn";
    case Layout::kTT: return "tt";
  }
  unknown_enum("Layout", static_cast<int>(layout));
}

std::optional<DType> parse_dtype(std::string_view text) {
  for (DType dtype : {DType::kBf16, DType::kFp16, DType::kFp32, DType::kTf32, DType::kFp8}) {
    if (text == to_string(dtype)) return dtype;
  }
  return std::nullopt;
}

std::optional<Layout> parse_layout(std::string_view text) {
  for (Layout layout : {Layout::kNN, Layout::kNT, Layout::kTN, Layout::kTT}) {
    if (text == to_string(layout)) return layout;
  }
  return std::nullopt;
}

int input_bytes(DType dtype) {
  switch (dtype) {
    case DType::kFp8: return 1;
    case DType::kBf16:
    case DType::kFp16: return 2;
    case DType::kFp32:
    case DType::kTf32: return 4;
  }
  unknown_enum("DType", static_cast<int>(dtype));
}

int output_bytes(DType dtype) {
  // cuBLASLt's FP8 GEMMs are run with a bf16 output, so C is twice as wide as A and B.
  if (dtype == DType::kFp8) return 2;
  return input_bytes(dtype);
}

std::string Problem::shape_string() const {
  if (batch > 1) return fmt::format("{}x{}x{} (batch {})", m, n, k, batch);
  return fmt::format("{}x{}x{}", m, n, k);
}

bool Problem::operator==(const Problem& other) const {
  return m == other.m && n == other.n && k == other.k && batch == other.batch &&
         dtype == other.dtype && layout == other.layout && lda == other.lda &&
         ldb == other.ldb && ldc == other.ldc && off_a == other.off_a && off_b == other.off_b &&
         off_c == other.off_c;
}

namespace {

int64_t round_up_ld(int64_t cols, int element_bytes, int row_bytes) {
  const int64_t step = std::max<int64_t>(1, row_bytes / element_bytes);
  return (cols + step - 1) / step * step;
}

bool misaligned(int64_t ld, int64_t offset, int element_bytes, int bytes) {
  return (ld * element_bytes) % bytes != 0 || (offset * element_bytes) % bytes != 0;
}

}  // namespace

Problem aligned_layout(const Problem& p, int row_bytes) {
  Problem q = p;
  q.lda = round_up_ld(p.a_cols(), input_bytes(p.dtype), row_bytes);
  q.ldb = round_up_ld(p.b_cols(), input_bytes(p.dtype), row_bytes);
  q.ldc = round_up_ld(p.n, output_bytes(p.dtype), row_bytes);
  q.off_a = q.off_b = q.off_c = 0;
  return q;
}

OperandCopies unaligned_operands(const Problem& p, int bytes) {
  return {misaligned(p.lda, p.off_a, input_bytes(p.dtype), bytes),
          misaligned(p.ldb, p.off_b, input_bytes(p.dtype), bytes),
          misaligned(p.ldc, p.off_c, output_bytes(p.dtype), bytes)};
}

}  // namespace shapescope
