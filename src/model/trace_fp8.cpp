#include "model/trace_fp8.hpp"

#include <fmt/format.h>

namespace shapescope {
namespace {

std::optional<Fp8Format> format_of(const std::string& type) {
  if (type == "c10::Float8_e4m3fn" || type == "Float8_e4m3fn") return Fp8Format::kE4m3;
  if (type == "c10::Float8_e5m2" || type == "Float8_e5m2") return Fp8Format::kE5m2;
  return std::nullopt;
}

// A scale of one element: [], [1], [1, 1].
bool scalar(const std::vector<int64_t>& dims) {
  for (int64_t d : dims)
    if (d != 1) return false;
  return true;
}

bool is(const std::vector<int64_t>& dims, int64_t rows, int64_t cols) {
  return dims.size() == 2 && dims[0] == rows && dims[1] == cols;
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string out;
  for (int64_t d : dims) out += (out.empty() ? "" : ", ") + std::to_string(d);
  return "[" + out + "]";
}

}  // namespace

std::optional<DType> trace_dtype(const std::string& type) {
  if (type == "c10::BFloat16" || type == "BFloat16") return DType::kBf16;
  if (type == "c10::Half" || type == "Half") return DType::kFp16;
  if (type == "float" || type == "c10::Float" || type == "Float") return DType::kFp32;
  if (format_of(type)) return DType::kFp8;
  return std::nullopt;
}

std::optional<DType> trace_pair_dtype(const std::string& type_a, const std::string& type_b, std::string& reason) {
  const std::optional<DType> da = trace_dtype(type_a), db = trace_dtype(type_b);
  if (!da || !db) {
    reason = fmt::format("input type '{}' is not one shapescope runs (c10::BFloat16, c10::Half, float, "
                         "c10::Float8_e4m3fn)",
                         da ? type_b : type_a);
    return std::nullopt;
  }
  if (*da != *db || (*da == DType::kFp8 && format_of(type_a) != format_of(type_b))) {
    reason = fmt::format("its inputs have two types ('{}' and '{}')", type_a, type_b);
    return std::nullopt;
  }
  return da;
}

std::optional<Fp8Recipe> scaled_mm_recipe(const ScaledMmArgs& x, std::string& reason) {
  const std::optional<Fp8Format> fa = format_of(x.type_a), fb = format_of(x.type_b);
  if (!fa || !fb) {
    reason = fmt::format("input type '{}' is not an fp8 format shapescope runs (c10::Float8_e4m3fn, c10::Float8_e5m2)",
                         fa ? x.type_b : x.type_a);
    return std::nullopt;
  }
  if (*fa == Fp8Format::kE5m2 && *fb == Fp8Format::kE5m2) {
    reason = "both operands are e5m2 (cuBLASLt has no e5m2 x e5m2 GEMM)";
    return std::nullopt;
  }
  Fp8Recipe r;
  r.a = *fa;
  r.b = *fb;
  const int64_t blocks = (x.k + 127) / 128, padded = (blocks + 3) / 4 * 4, n_blocks = (x.n + 127) / 128;
  const auto k_blocks = [&](int64_t d) { return d == blocks || d == padded; };
  const std::vector<int64_t>& sa = x.scale_a;
  const std::vector<int64_t>& sb = x.scale_b;
  if (scalar(sa) && scalar(sb)) {
    r.scaling = Fp8Scaling::kTensor;
  } else if (is(sa, x.m, 1) && is(sb, 1, x.n)) {
    r.scaling = Fp8Scaling::kRow;
  } else if (is(sa, x.m, blocks) && sb.size() == 2 && k_blocks(sb[0]) && sb[1] == n_blocks) {
    r.scaling = Fp8Scaling::kBlock;
  } else if (is(sa, x.m, blocks) && sb.size() == 2 && k_blocks(sb[0]) && sb[1] == x.n) {
    r.scaling = Fp8Scaling::kBlock1x128;
  } else {
    reason = fmt::format("scales {} and {} for a {}x{}x{} GEMM are no fp8 recipe shapescope runs (tensor, row, "
                         "1x128 x 128x128, 1x128 x 1x128)",
                         dims_text(sa), dims_text(sb), x.m, x.n, x.k);
    return std::nullopt;
  }
  return r;
}

}  // namespace shapescope
