// --backend values: the backends' names, and the variants of our kernels that a value ("custom",
// "custom:<kernel>[:<BMxBN>[:<schedule>]]") selects. Plain C++: no CUDA headers.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/backend_kind.hpp"
#include "kernels/registry.hpp"

namespace shapescope {

// The variants of our kernels a custom spec's selection picks, from its parts (nothing parsed).
// Throws Error(kUsage) naming the spec when it picks none (a selection made in code from a key this
// build's registry does not have) or is not custom.
std::vector<const kernels::Variant*> select_variants(const BackendSpec& spec);

// One variant as a selection (its whole key: kernel, tile and schedule).
VariantSelection selection_of(const kernels::Variant& v);
// The custom backend of a stored point's algo (a variant's key, the store's text): nullopt for a key
// that names no variant of this build's registry.
std::optional<BackendSpec> stored_variant_spec(const std::string& algo);

// A --backend item: cublas, cublaslt, cublas_grouped or custom[:<kernel>[:<BMxBN>[:<schedule>]]], its
// selection of our kernels checked (one variant selected is kept as its whole key: "custom:01_naive"
// is "custom:01_naive:16x16:dp" where 01 has one variant); Error(kUsage) naming the value otherwise
// (explain's controls, copy and empty, are no --backend items).
BackendSpec parse_backend_spec(const std::string& text);

}  // namespace shapescope
