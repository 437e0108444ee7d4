#include "model/perf_neighbours.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

namespace shapescope {

namespace {

constexpr size_t kNeighbours = 24;       // measured shapes a local fit takes
constexpr size_t kRatioNeighbours = 4;   // unaligned shapes an unaligned class's ratio takes
// An unaligned class's own local fit takes more: its shapes lie on sparser lines, and its kernels
// (split-K slices chosen shape by shape) scatter more (held-out median and p95 of bf16 nt's unaligned
// classes from their own fit alone: 9.6 % / 40.9 % with 12, 9.1 % / 38.0 % with 24, 9.2 % / 33.1 %
// with 48, 9.7 % / 34.7 % with 96).
constexpr size_t kUnalignedNeighbours = 48;
constexpr double kKBlockBytes = 128;     // the K block of an input row
constexpr double kRidge = 1e-3;          // the slopes' pull towards 0, as a share of the weights
constexpr double kLeastAboveFloor = 0.05;
constexpr double kRatioSoftening = 0.05;  // log distance added before the ratio's inverse-square weight

struct Near {
  double distance = 0;
  size_t index = 0;
};

// The M the waves see: a strided batched GEMM runs batch times the tiles of one, as a GEMM of batch x M
// rows would (in the fit's held-out check of the H100's samples, batched shapes' median / p95 error
// 18.8 / 76.8 % with M and batch apart, 13.1 / 61.5 % with this).
double log_rows(const PerfClass::Kernel& k) { return k.log_m + k.log_batch; }
double log_rows(const Problem& p) { return std::log(double(p.m) * double(p.batch)); }

// A problem's logs, taken once per search (a search measures its distance to every shape of a class:
// four logs each were half of a predicted profile's time).
struct LogShape {
  double rows, n, k, batch;
  explicit LogShape(const Problem& p)
      : rows(log_rows(p)), n(std::log(double(p.n))), k(std::log(double(p.k))), batch(std::log(double(p.batch))) {}
};

double log_distance(const PerfClass::Kernel& k, const LogShape& p) {
  const double dm = log_rows(k) - p.rows, dn = k.log_n - p.n;
  const double dk = k.log_k - p.k, db = k.log_batch - p.batch;
  return std::sqrt(dm * dm + dn * dn + dk * dk + db * db);
}

// The `count` nearest kernels of the class to `p` less those `out` leaves out, nearest first; ties by
// M, N, K so that the same samples give the same prediction whatever their order.
std::vector<Near> nearest(const PerfClass& c, const Problem& p, PerfLeaveOut out, size_t count) {
  std::vector<Near> near;
  near.reserve(c.kernels.size());
  const LogShape logs(p);
  const auto gather = [&](bool lines) {
    near.clear();
    for (size_t i = 0; i < c.kernels.size(); ++i) {
      const PerfClass::Kernel& k = c.kernels[i];
      const bool same = k.m == p.m && k.n == p.n && k.k == p.k && k.batch == p.batch;
      if (out.self && (same || (lines && ((out.m && k.m == p.m) || (out.n && k.n == p.n) || (out.k && k.k == p.k)))))
        continue;
      near.push_back({log_distance(k, logs), i});
    }
  };
  gather(true);
  if (near.size() < kNeighbours) gather(false);
  const size_t n = std::min(count, near.size());
  std::partial_sort(near.begin(), near.begin() + long(n), near.end(), [&](const Near& a, const Near& b) {
    const PerfClass::Kernel &x = c.kernels[a.index], &y = c.kernels[b.index];
    return a.distance != b.distance ? a.distance < b.distance
                                    : std::tie(x.m, x.n, x.k, x.batch) < std::tie(y.m, y.n, y.k, y.batch);
  });
  near.resize(n);
  return near;
}

// The local fit's unknowns: the log rate at the problem and its slopes in log M, N, K and batch.
constexpr size_t kTerms = 5;

// Solves the system a x = b (b: a's last column) by Gaussian elimination with partial pivoting;
// false when singular.
bool solve(std::array<std::array<double, kTerms + 1>, kTerms> a, std::array<double, kTerms>& x) {
  for (size_t col = 0; col < kTerms; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < kTerms; ++r)
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    if (!(std::abs(a[pivot][col]) > 1e-300)) return false;
    std::swap(a[col], a[pivot]);
    for (size_t r = 0; r < kTerms; ++r) {
      if (r == col) continue;
      const double f = a[r][col] / a[col][col];
      for (size_t j = col; j <= kTerms; ++j) a[r][j] -= f * a[col][j];
    }
  }
  for (size_t i = 0; i < kTerms; ++i) x[i] = a[i][kTerms] / a[i][i];
  return true;
}

}  // namespace

double perf_work(int64_t m, int64_t n, int64_t k, int64_t batch, DType dtype) {
  const int64_t block = std::max<int64_t>(1, int64_t(kKBlockBytes / input_bytes(dtype)));
  const int64_t padded = (k + block - 1) / block * block;
  return 2.0 * double(m) * double(n) * double(padded) * double(batch);
}

double perf_work(const Problem& p) { return perf_work(p.m, p.n, p.k, p.batch, p.dtype); }

double perf_above_floor(double us, double floor_us) { return std::max(us - floor_us, kLeastAboveFloor * floor_us); }

size_t perf_neighbours(const PerfClass& c) { return c.from_aligned ? kUnalignedNeighbours : kNeighbours; }

PerfNeighbourFit perf_local_fit(const PerfClass& c, const Problem& p, double floor_us, PerfLeaveOut leave_out) {
  const std::vector<Near> near = nearest(c, p, leave_out, perf_neighbours(c));
  PerfNeighbourFit out;
  if (near.empty()) return out;
  out.nearest = near.front().index;
  if (near.front().distance == 0) {
    out.us = c.kernels[out.nearest].us;
    return out;
  }
  // Tricube weights over the farthest neighbour's distance (a hair beyond, so that it still counts).
  const double reach = near.back().distance * 1.01 + 1e-9;
  std::array<std::array<double, kTerms + 1>, kTerms> a{};
  double weights = 0;
  const double lm = log_rows(p), ln = std::log(double(p.n)), lk = std::log(double(p.k));
  const double lb = std::log(double(p.batch));
  double fastest = std::numeric_limits<double>::infinity();  // the least log(time / work) of the neighbours
  for (const Near& e : near) {
    const PerfClass::Kernel& k = c.kernels[e.index];
    const double r = 1 - std::pow(e.distance / reach, 3), w = r * r * r;
    const std::array<double, kTerms> x = {1, log_rows(k) - lm, k.log_n - ln, k.log_k - lk, k.log_batch - lb};
    const double y = std::log(perf_above_floor(k.us, floor_us) / perf_work(k.m, k.n, k.k, k.batch, c.dtype));
    fastest = std::min(fastest, y);
    for (size_t i = 0; i < kTerms; ++i) {
      a[i][kTerms] += w * x[i] * y;
      for (size_t j = 0; j < kTerms; ++j) a[i][j] += w * x[i] * x[j];
    }
    weights += w;
  }
  // Neighbours that span no direction (all at one N, or all unbatched, say) leave its slope to the
  // ridge: 0.
  for (size_t i = 1; i < kTerms; ++i) a[i][i] += kRidge * weights;
  std::array<double, kTerms> coef{};
  // The slopes may carry the rate past the fastest neighbour's (at a shape past the neighbours' corner,
  // a batch of 128 of 4096 x 4096 read 2,760 TFLOP/s): no faster than the fastest.
  const double log_rate = std::max(fastest, solve(a, coef) ? coef[0] : a[0][kTerms] / a[0][0]);
  out.us = floor_us + std::exp(log_rate) * perf_work(p);
  return out;
}

PerfRatio perf_log_ratio_near(const PerfClass& c, const Problem& p, PerfLeaveOut leave_out) {
  double sum = 0, weights = 0;
  const std::vector<Near> near = nearest(c, p, leave_out, kRatioNeighbours);
  for (const Near& e : near) {
    const double w = 1 / ((e.distance + kRatioSoftening) * (e.distance + kRatioSoftening));
    sum += w * c.kernels[e.index].log_ratio;
    weights += w;
  }
  PerfRatio out;
  if (weights > 0) out.log_ratio = sum / weights;
  if (!near.empty()) out.nearest = near.front().index, out.distance = near.front().distance;
  return out;
}

}  // namespace shapescope
