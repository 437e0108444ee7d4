// A torch._scaled_mm call as an fp8 recipe: its operands' types give the formats (e4m3, e5m2), its
// scales' shapes the scaling, as PyTorch itself dispatches them (ScaledBlas.cpp). For mat_a [M, K]
// and mat_b [K, N] (a Linear's weight.t(): B stored N x K), with L = ceil(K / 128):
//   scale_a [] or [1] (or [1, 1]),  scale_b likewise            tensor
//   scale_a [M, 1],                 scale_b [1, N]              row
//   scale_a [M, L],                 scale_b [L, ceil(N / 128)]  block (1x128 x 128x128)
//   scale_a [M, L],                 scale_b [L, N]              block-1x128 (1x128 x 1x128)
// scale_b's K blocks may read round_up(L, 4) (the padded 128x128 layout seen as its storage). A
// 128x128 A with a 1x128 B, or any other shapes, is no recipe shapescope runs. Pure C++.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/fp8_recipe.hpp"
#include "core/problem.hpp"

namespace shapescope {

// An operand's "Input type" as a dtype (c10::BFloat16, c10::Half, float, c10::Float8_e4m3fn;
// c10::Float8_e5m2 too, an fp8 format of _scaled_mm); nullopt for any other.
std::optional<DType> trace_dtype(const std::string& type);
// The dtype of an op's two operands, or nullopt with the reason (a type shapescope does not run, or two
// types; _scaled_mm's e4m3 x e5m2 is its recipe's business, scaled_mm_recipe).
std::optional<DType> trace_pair_dtype(const std::string& type_a, const std::string& type_b, std::string& reason);

struct ScaledMmArgs {
  std::string type_a, type_b;           // "c10::Float8_e4m3fn", "c10::Float8_e5m2"
  int64_t m = 0, n = 0, k = 0;          // of the GEMM
  std::vector<int64_t> scale_a, scale_b;  // dims; empty for a 0-d scale (or none recorded)
};

// The recipe, or nullopt with the reason in one line.
std::optional<Fp8Recipe> scaled_mm_recipe(const ScaledMmArgs& args, std::string& reason);

}  // namespace shapescope
