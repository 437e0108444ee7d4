// A store's points by problem, for the views that look up many problems in one pool (profile's
// GEMMs, explain's neighbours and controls, report's slow shapes): a hash table, not a scan of the
// pool per problem, which made a list of 200,000 GEMMs or 4,000 explains quadratic.
#pragma once
#include <algorithm>
#include <functional>
#include <unordered_map>
#include <vector>

#include "core/problem.hpp"
#include "core/records.hpp"

namespace shapescope {

class PointIndex {
 public:
  PointIndex() = default;
  // The points of `pool` that `keep` keeps (all without one); the pool must outlive the index.
  explicit PointIndex(const std::vector<StoredPoint>& pool, const std::function<bool(const StoredPoint&)>& keep = {}) {
    for (const StoredPoint& p : pool)
      if (!keep || keep(p)) by_problem_.emplace(p.key.problem, &p);
  }
  // The problem's points in the pool's order (the pool is one vector: its addresses are its order).
  std::vector<const StoredPoint*> of(const Problem& problem) const {
    std::vector<const StoredPoint*> out;
    for (auto [it, end] = by_problem_.equal_range(problem); it != end; ++it) out.push_back(it->second);
    std::sort(out.begin(), out.end(), std::less<const StoredPoint*>());
    return out;
  }

 private:
  std::unordered_multimap<Problem, const StoredPoint*, ProblemHash> by_problem_;
};

}  // namespace shapescope
