// Stored points with their annotations, for every view: the model run over what the store holds,
// each point against its own GPU's limits and calibrated peaks, regret across the set.
#pragma once
#include <optional>
#include <vector>

#include "model/annotate.hpp"
#include "store/store.hpp"

namespace shapescope {

// The registry's tiling of a "custom" point's variant; nullopt for other backends or unknown keys.
std::optional<OwnKernelTiling> own_kernel_tiling(const PointKey& key);

std::vector<Annotation> annotate_points(const Store& store, const std::vector<StoredPoint>& points);

// annotate_points, and the annotations written to the store: a derived copy for SQL users (views
// recompute them). Every command that measures calls this on measure()'s points.
std::vector<Annotation> annotate_and_save(Store& store, const std::vector<StoredPoint>& points);

}  // namespace shapescope
