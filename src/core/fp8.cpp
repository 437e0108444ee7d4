#include "core/fp8.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "core/numerics.hpp"

namespace shapescope {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

constexpr Fp8Scaling kScalings[] = {Fp8Scaling::kTensor, Fp8Scaling::kRow, Fp8Scaling::kBlock, Fp8Scaling::kBlock1x128};

std::optional<Fp8Format> parse_format(std::string_view text) {
  for (Fp8Format f : {Fp8Format::kE4m3, Fp8Format::kE5m2})
    if (text == to_string(f)) return f;
  return std::nullopt;
}

}  // namespace

std::string_view to_string(ErrorData data) { return data == ErrorData::kOutliers ? "outliers" : "gaussian"; }

std::string_view to_string(Fp8Scaling scaling) {
  switch (scaling) {
    case Fp8Scaling::kTensor: return "tensor";
    case Fp8Scaling::kRow: return "row";
    case Fp8Scaling::kBlock: return "block";
    case Fp8Scaling::kBlock1x128: return "block-1x128";
  }
  return "";
}

std::string_view to_string(Fp8Format format) { return format == Fp8Format::kE5m2 ? "e5m2" : "e4m3"; }

std::string recipe_text(const Fp8Recipe& r) {
  std::string text(to_string(r.scaling));
  if (r.a != Fp8Format::kE4m3 || r.b != Fp8Format::kE4m3) text += fmt::format(":{}x{}", to_string(r.a), to_string(r.b));
  return text;
}

std::optional<Fp8Recipe> parse_recipe(std::string_view text) {
  const size_t colon = text.find(':');
  const std::string_view scaling = text.substr(0, colon);
  Fp8Recipe r;
  bool known = false;
  for (Fp8Scaling s : kScalings)
    if (scaling == to_string(s)) {
      r.scaling = s;
      known = true;
    }
  if (!known) return std::nullopt;
  if (colon == std::string_view::npos) return r;
  const std::string_view formats = text.substr(colon + 1);
  const size_t x = formats.find('x');
  if (x == std::string_view::npos) return std::nullopt;
  const std::optional<Fp8Format> a = parse_format(formats.substr(0, x)), b = parse_format(formats.substr(x + 1));
  if (!a || !b) return std::nullopt;
  r.a = *a;
  r.b = *b;
  // One spelling per recipe: the e4m3 x e4m3 default has no suffix.
  if (r.a == Fp8Format::kE4m3 && r.b == Fp8Format::kE4m3) return std::nullopt;
  return r;
}

Fp8Recipe recipe_option(std::string_view text) {
  const std::optional<Fp8Recipe> r = parse_recipe(text);
  if (!r)
    throw usage_error(fmt::format("--recipe: '{}' is not an fp8 recipe (tensor, row, block, block-1x128; e5m2 "
                                  "operands as e.g. tensor:e5m2xe4m3)",
                                  text));
  return *r;
}

std::string_view to_string(CastOperand operand) {
  switch (operand) {
    case CastOperand::kNone: return "";
    case CastOperand::kA: return "a";
    case CastOperand::kB: return "b";
  }
  return "";
}

std::optional<CastOperand> parse_cast_operand(std::string_view text) {
  for (CastOperand o : {CastOperand::kNone, CastOperand::kA, CastOperand::kB})
    if (text == to_string(o)) return o;
  return std::nullopt;
}

std::string_view to_string(ScaleGrain grain) {
  switch (grain) {
    case ScaleGrain::kTensor: return "tensor";
    case ScaleGrain::kRow: return "row";
    case ScaleGrain::kVec128: return "1x128";
    case ScaleGrain::kBlock128: return "128x128";
  }
  return "";
}

ScaleGrain scale_grain(Fp8Scaling scaling, CastOperand operand) {
  switch (scaling) {
    case Fp8Scaling::kTensor: return ScaleGrain::kTensor;
    case Fp8Scaling::kRow: return ScaleGrain::kRow;
    case Fp8Scaling::kBlock: return operand == CastOperand::kB ? ScaleGrain::kBlock128 : ScaleGrain::kVec128;
    case Fp8Scaling::kBlock1x128: return ScaleGrain::kVec128;
  }
  return ScaleGrain::kTensor;
}

ScaleLayout scale_layout(ScaleGrain grain, int64_t rows, int64_t k) {
  ScaleLayout s;
  s.grain = grain;
  s.rows = rows;
  switch (grain) {
    case ScaleGrain::kTensor: break;
    case ScaleGrain::kRow: s.count = rows; break;
    case ScaleGrain::kVec128:
      s.k_blocks = ceil_div(k, kScaleBlock);
      s.ld = rows;
      s.count = rows * s.k_blocks;
      break;
    case ScaleGrain::kBlock128:
      s.k_blocks = ceil_div(k, kScaleBlock);
      s.ld = ceil_div(s.k_blocks, 4) * 4;  // cuBLASLt's L4: the K blocks rounded up to a multiple of 4
      s.count = ceil_div(rows, kScaleBlock) * s.ld;
      break;
  }
  return s;
}

ScaleLayout scale_layout(const Problem& p, CastOperand operand) {
  const int64_t rows = operand == CastOperand::kB ? p.n : p.m;
  return scale_layout(scale_grain(p.recipe.scaling, operand), rows, p.k);
}

std::optional<std::string> recipe_unsupported(const Problem& p, int cc) {
  if (p.dtype != DType::kFp8) return std::nullopt;
  const std::string name = recipe_text(p.recipe);
  if (p.cast == CastOperand::kNone && p.layout != Layout::kNT)
    return fmt::format("fp8 runs only in layout nt (A row-major M x K, B stored N x K: cuBLASLt's TN form); this "
                       "GEMM is {}",
                       to_string(p.layout));
  if (p.recipe.a == Fp8Format::kE5m2 && p.recipe.b == Fp8Format::kE5m2)
    return std::string("cuBLASLt has no e5m2 x e5m2 GEMM (one operand must be e4m3)");
  const Fp8Scaling s = p.recipe.scaling;
  if (s == Fp8Scaling::kTensor) return std::nullopt;
  if (cc < 90)
    return fmt::format("recipe {} needs compute capability 9.0 (cuBLASLt's {} scales run on Hopper); this GPU is "
                       "{}.{}",
                       name, s == Fp8Scaling::kRow ? "outer-vector" : "128-element block", cc / 10, cc % 10);
  if (s != Fp8Scaling::kRow && cc / 10 != 9)
    return fmt::format("recipe {}: cuBLASLt runs 1x128 and 128x128 block scales on compute capability 9.x only "
                       "(Blackwell scales blocks of 32 in MXFP8 instead); this GPU is {}.{}",
                       name, cc / 10, cc % 10);
  if (p.grouped() || p.batch > 1)
    return fmt::format("recipe {}: a {} call has one scale layout per matrix, which cuBLASLt takes for one "
                       "GEMM only; run it per matrix or with recipe tensor",
                       name, p.grouped() ? "grouped" : "batched");
  if (s != Fp8Scaling::kRow && p.k % kScaleBlock != 0)
    return fmt::format("recipe {}: K = {} is not a multiple of 128 (its scales cover 128 elements of K each; "
                       "pad K to {})",
                       name, p.k, ceil_div(p.k, kScaleBlock) * kScaleBlock);
  return std::nullopt;
}

Problem fp8_problem(const Problem& source, const Fp8Recipe& recipe) {
  Problem p;
  p.m = source.m;
  p.n = source.n;
  p.k = source.k;
  p.batch = source.batch;
  p.dtype = DType::kFp8;
  p.layout = Layout::kNT;
  p.lda = p.k;
  p.ldb = p.k;
  p.ldc = p.n;
  p.recipe = recipe;
  return p;
}

Problem cast_problem(const Problem& source, const Fp8Recipe& recipe, CastOperand operand) {
  if (operand == CastOperand::kNone)
    throw Error(ExitCode::kInternal, "internal error: cast_problem of no operand");
  Problem c;
  c.dtype = DType::kFp8;
  c.recipe = recipe;
  c.cast = operand;
  c.k = source.k;
  if (operand == CastOperand::kA) {
    c.m = source.m;
    c.layout = source.a_transposed() ? Layout::kTT : Layout::kNT;
    c.lda = source.lda;
  } else {
    c.n = source.n;
    c.layout = source.b_transposed() ? Layout::kNT : Layout::kNN;
    c.ldb = source.ldb;
  }
  return c;
}

std::optional<std::string> cast_unsupported(const Problem& p) {
  if (p.cast == CastOperand::kNone) return std::string("not a cast (a GEMM runs on cublas, cublaslt or custom)");
  if (p.dtype != DType::kFp8) return fmt::format("a cast writes fp8, not {}", to_string(p.dtype));
  const int64_t rows = cast_rows(p);
  if (rows < 1 || p.k < 1) return fmt::format("{}: an empty matrix", p.shape_string());
  if (cast_source_ld(p) < (cast_transposes(p) ? rows : p.k))
    return fmt::format("{}: its source's leading dimension {} is shorter than its rows", p.shape_string(),
                       cast_source_ld(p));
  if (ceil_div(rows, kScaleBlock) > 65535) return fmt::format("{}: more than 65535 x 128 rows", p.shape_string());
  return std::nullopt;
}

int64_t cast_rows(const Problem& c) { return c.cast == CastOperand::kB ? c.n : c.m; }

bool cast_transposes(const Problem& c) { return c.cast == CastOperand::kB ? !c.b_transposed() : c.a_transposed(); }

int64_t cast_source_ld(const Problem& c) { return c.cast == CastOperand::kB ? c.ldb : c.lda; }

Fp8Format cast_format(const Problem& c) { return c.cast == CastOperand::kB ? c.recipe.b : c.recipe.a; }

int64_t cast_bytes(const Problem& c) {
  const int64_t rows = cast_rows(c);
  const int64_t source_rows = cast_transposes(c) ? c.k : rows;
  const ScaleLayout s = scale_layout(c, c.cast);
  return source_rows * cast_source_ld(c) * 2 + rows * c.k + (s.count + rows + 1) * 4;
}

}  // namespace shapescope
