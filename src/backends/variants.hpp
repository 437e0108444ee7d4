// --backend values: the backends' names, and the variants of our kernels that a value ("custom",
// "custom:<kernel>[:<BMxBN>[:<schedule>]]") selects. Plain C++: no CUDA headers.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/backend_kind.hpp"
#include "kernels/registry.hpp"

namespace shapescope {

// The variants of our kernels a custom spec selects. Throws Error(kUsage) naming the value for an
// unknown kernel, tile or schedule (listing what exists).
std::vector<const kernels::Variant*> select_variants(const BackendSpec& spec);

// A --backend item: cublas, cublaslt, cublas_grouped or custom[:<kernel>[:<BMxBN>[:<schedule>]]], its
// selection of our kernels checked (one variant selected is kept as its whole key: "custom:01_naive"
// is "custom:01_naive:16x16:dp" where 01 has one variant); Error(kUsage) naming the value otherwise
// (explain's controls, copy and empty, are no --backend items).
BackendSpec parse_backend_spec(const std::string& text);

}  // namespace shapescope
