// Stored points with their annotations, for every view: the model run over what the store holds,
// each point against its own GPU's limits and calibrated peaks, regret across the set.
#pragma once
#include <vector>

#include "model/annotate.hpp"
#include "store/store.hpp"

namespace shapescope {

std::vector<Annotation> annotate_points(const Store& store, const std::vector<StoredPoint>& points);

}  // namespace shapescope
