// Problem moved to core/ (the vocabulary every layer shares). This forwarding header stays only for
// kernels/registry.hpp, which is edited elsewhere; include "core/problem.hpp" in new code.
#pragma once
#include "core/problem.hpp"
