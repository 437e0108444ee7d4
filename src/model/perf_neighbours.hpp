// The performance model's prediction from measured neighbours (model/perf_model.hpp), apart from the
// fit's bookkeeping: a local fit of the efficiency over the nearest measured shapes in log M, N, K and
// batch, and an unaligned class's ratio to its aligned class. Pure C++.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/problem.hpp"
#include "model/perf_model.hpp"

namespace shapescope {

// The work a GEMM's kernel does: 2 M N K FLOPs per batch with K rounded up to the kernel's K block
// (128 bytes of an input row: 64 bf16 elements), because a K that stops inside a block costs the
// whole block (K 200 takes as long as K 256).
double perf_work(const Problem& p);
double perf_work(int64_t m, int64_t n, int64_t k, int64_t batch, DType dtype);

// Which measured shapes a prediction leaves out: none (a new shape's), or (the fit's held-out check)
// the shape itself and, per size flagged, every shape that shares that size with it, so that its
// neighbours lie as far as a new shape's between the measured values; where fewer than the neighbours
// a prediction takes would remain, only the shape itself.
struct PerfLeaveOut {
  bool self = false;
  bool m = false, n = false, k = false;
};

struct PerfNeighbourFit {
  double us = 0;          // the predicted time, launch floor included
  size_t nearest = 0;     // index into the class's kernels of the nearest shape used
};

// The class's local prediction for `p` (the class must hold kernels): the weighted (tricube in the
// log distance) least-squares fit of log(time above the floor / work) over the nearest measured shapes,
// linear in log M, N, K and batch (all unbatched: its slope 0), at the problem's own sizes, times its
// work, plus the floor; a shape the class measured (and `leave_out` keeps) gets its measured time.
// M counts batch x M (the tiles the waves see) and the slope in log batch stays for what else batch
// changes; the rate is no faster than the fastest neighbour's. An unaligned class's own fit takes 48
// neighbours, an aligned class's 24 (perf_neighbours).
PerfNeighbourFit perf_local_fit(const PerfClass& c, const Problem& p, double floor_us, PerfLeaveOut out = {});
size_t perf_neighbours(const PerfClass& c);

// The log ratio of an unaligned class's time above the floor to its aligned class's prediction
// near `p`: the inverse-square-distance weighted mean of its nearest shapes' `log_ratio`s; and the
// nearest of them (the class must hold kernels).
struct PerfRatio {
  double log_ratio = 0;
  size_t nearest = 0;
  double distance = 0;  // of the nearest, in the log sizes: 0 for a measured shape
};
PerfRatio perf_log_ratio_near(const PerfClass& c, const Problem& p, PerfLeaveOut out = {});

// A measured time as the fit reads it above the floor: a twentieth of the floor at least, so that a
// shape at the floor still has a (small) positive work rate.
double perf_above_floor(double us, double floor_us);

}  // namespace shapescope
