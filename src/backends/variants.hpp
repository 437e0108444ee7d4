// --backend values: the backends' names, and the variants of our kernels that a value ("custom",
// "custom:<kernel>[:<BMxBN>[:<schedule>]]") selects. Plain C++: no CUDA headers.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "kernels/registry.hpp"

namespace shapescope {

// Throws Error(kUsage) naming the value for an unknown kernel, tile or schedule (listing what exists).
std::vector<const kernels::Variant*> select_variants(const std::string& spec);

std::vector<std::string> backend_names();
// "custom" or "custom:..." (our kernels; the store's backend is then "custom").
bool is_custom_backend(const std::string& name);
// Whether `name` is a valid --backend item (custom selections included); the message says why not.
std::optional<std::string> backend_name_error(const std::string& name);

}  // namespace shapescope
