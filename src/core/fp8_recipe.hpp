// An fp8 GEMM's recipe: how its operands are scaled and which 8-bit format each holds. Part of a
// point's key (it changes the answer), so it lives in the Problem; core/fp8.hpp has what follows from
// it (the scales' layouts, what cuBLASLt refuses, the casts). Plain C++.
//
//   tensor       one fp32 scale per operand (Transformer Engine's per-tensor scaling)
//   row          a scale per row of A and per column of B (cuBLASLt's outer vectors; torchao's rowwise)
//   block        A in 1x128 tiles along K, B in 128x128 blocks (DeepSeek-V3's forward and input
//                gradient: activations and gradients 1x128, weights 128x128)
//   block-1x128  both operands in 1x128 tiles along K (the weight gradient, where both operands are
//                activations or gradients)
// Operands are e4m3 unless the recipe says otherwise: ":e5m2xe4m3" makes A e5m2 (a gradient in
// Transformer Engine's HYBRID format), ":e4m3xe5m2" B. cuBLASLt has no e5m2 x e5m2 GEMM.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace shapescope {

enum class Fp8Scaling { kTensor, kRow, kBlock, kBlock1x128 };
enum class Fp8Format { kE4m3, kE5m2 };

struct Fp8Recipe {
  Fp8Scaling scaling = Fp8Scaling::kTensor;
  Fp8Format a = Fp8Format::kE4m3, b = Fp8Format::kE4m3;
  bool operator==(const Fp8Recipe& o) const { return scaling == o.scaling && a == o.a && b == o.b; }
  bool operator!=(const Fp8Recipe& o) const { return !(*this == o); }
};

std::string_view to_string(Fp8Scaling scaling);  // "tensor", "row", "block", "block-1x128"
std::string_view to_string(Fp8Format format);    // "e4m3", "e5m2"
// "block", "tensor:e5m2xe4m3": the scaling, and the formats when one is not e4m3.
std::string recipe_text(const Fp8Recipe& recipe);
// recipe_text() read back; nullopt for anything else.
std::optional<Fp8Recipe> parse_recipe(std::string_view text);
// --recipe's value: Error(kUsage) naming --recipe and the value otherwise.
Fp8Recipe recipe_option(std::string_view text);

// Which operand of its GEMM a "cast" point quantizes (backend cast): kNone for a GEMM.
enum class CastOperand { kNone, kA, kB };
std::string_view to_string(CastOperand operand);  // "", "a", "b": the store's cast_operand column
std::optional<CastOperand> parse_cast_operand(std::string_view text);

}  // namespace shapescope
