#include "views/measured_set.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <tuple>
#include <unordered_set>

#include "common/error.hpp"
#include "core/backend_kind.hpp"
#include "measure/measure.hpp"
#include "timing/stats.hpp"
#include "views/annotated.hpp"

namespace shapescope {
size_t MeasuredSet::CallHash::operator()(const Call& c) const {
  // The problem's hash mixed with the backend's kind (boost::hash_combine's step); variants of our
  // kernels at one problem are few, and operator== tells them apart.
  const size_t seed = hash_value(c.problem);
  return seed ^ (std::hash<int>{}(int(c.backend.kind)) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

MeasuredSet::MeasuredSet(const DeviceContext& device, Store& store, int samples, ClockState clocks,
                         const std::atomic<bool>* interrupted,
                         std::string command)
    : device_(device), store_(store), samples_(samples), clocks_(clocks), interrupted_(interrupted), command_(std::move(command)) {}

void MeasuredSet::read_only_from(std::vector<StoredPoint> pool) {
  pool_ = std::move(pool);
  pool_index_.clear();
  for (size_t i = 0; i < pool_->size(); ++i) pool_index_.emplace((*pool_)[i].key.problem, i);
}

size_t MeasuredSet::unknown(const std::vector<BackendProblem>& wanted) const {
  std::vector<SpecProblem> specs;
  for (const auto& [p, backend] : wanted) specs.emplace_back(p, BackendSpec(backend));
  return unknown(specs);
}

size_t MeasuredSet::unknown(const std::vector<SpecProblem>& wanted) const {
  std::unordered_set<Call, CallHash> seen;
  for (const auto& [p, backend] : wanted)
    if (!find(p, backend)) seen.insert(Call{p, backend});
  return seen.size();
}

std::vector<std::string> MeasuredSet::measure_all(const std::vector<BackendProblem>& wanted,
                                                  const ProgressFor& progress_for) {
  std::vector<SpecProblem> specs;
  for (const auto& [p, backend] : wanted) specs.emplace_back(p, BackendSpec(backend));
  return measure_all(specs, progress_for);
}

std::vector<std::string> MeasuredSet::measure_all(const std::vector<SpecProblem>& wanted,
                                                  const ProgressFor& progress_for) {
  if (pool_) {
    for (const auto& [p, backend] : wanted) {
      if (find(p, backend)) continue;
      std::vector<size_t> at;  // the problem's points, in the store's order
      for (auto [it, end] = pool_index_.equal_range(p); it != end; ++it) at.push_back(it->second);
      std::sort(at.begin(), at.end());
      for (const size_t i : at) {
        const StoredPoint& s = (*pool_)[i];
        if (same_setup(s.device, device_) && s.key.backend == backend.kind && s.key.algo == backend.algo() &&
            !s.key.hot && (s.key.clocks == clocks_ || s.key.clocks == ClockState::kUnrecorded)) {
          points_.emplace(Call{p, backend}, s);
          ++reused_;
          break;
        }
      }
    }
    return {};
  }
  // One request per backend and dtype (in the order of the backends' names), the problems in the order
  // asked, each once.
  std::map<std::pair<BackendSpec, DType>, MeasureRequest> requests;
  std::unordered_set<Call, CallHash> asked;
  for (const auto& [p, backend] : wanted) {
    if (find(p, backend) || !asked.insert(Call{p, backend}).second) continue;
    MeasureRequest& r = requests[{backend, p.dtype}];
    r.backends = {backend};
    r.measure.samples = samples_;
    r.measure.clocks = clocks_;
    r.problems.push_back(p);
  }
  std::vector<std::string> skipped;
  for (auto& entry : requests) {
    MeasureRequest& request = entry.second;
    const BackendSpec backend = request.backends.front();
    const MeasureOutcome outcome =
        measure(request, device_, store_, progress_for(request.problems.size()), interrupted_);
    annotate_and_save(store_, outcome.points);
    if (outcome.interrupted)
      throw Error(ExitCode::kInterrupted,
                  fmt::format("{}: interrupted (measured points are saved; the same command resumes)", command_));
    skipped.insert(skipped.end(), outcome.skipped.begin(), outcome.skipped.end());
    measured_ += outcome.measured;
    reused_ += outcome.reused;
    const std::string algo = backend.algo();
    for (const StoredPoint& p : with_clock_state(outcome.points, clocks_))
      if (p.key.backend == backend.kind && p.key.algo == algo && !p.key.hot)
        points_.emplace(Call{p.key.problem, backend}, p);
  }
  return skipped;
}

const StoredPoint* MeasuredSet::find(const Problem& problem, BackendKind backend) const {
  return find(problem, BackendSpec(backend));
}

const StoredPoint* MeasuredSet::find(const Problem& problem, const BackendSpec& backend) const {
  const auto found = points_.find(Call{problem, backend});
  return found != points_.end() ? &found->second : nullptr;
}

std::optional<GemmTime> MeasuredSet::time_of(const Problem& problem, BackendKind backend) const {
  const StoredPoint* p = find(problem, backend);
  if (!p) return std::nullopt;
  return GemmTime{p->result.timing.median_us, p->result.timing.noise};
}

std::optional<Annotation> MeasuredSet::annotation_of(const Problem& problem, BackendKind backend) const {
  const StoredPoint* p = find(problem, backend);
  if (!p) return std::nullopt;
  return annotate_points(store_, {*p}).front();
}

MeasurementSummary MeasuredSet::summary() const {
  MeasurementSummary m;
  m.device = device_;
  m.measured = measured_;
  m.reused = reused_;
  std::vector<double> clocks;
  for (const auto& [key, p] : points_) {
    if (p.result.timing.sm_clock_mhz) clocks.push_back(*p.result.timing.sm_clock_mhz);
    m.throttled += p.result.timing.throttled;
  }
  m.gemms = points_.size();
  if (!clocks.empty()) m.median_clock_mhz = middle_value(clocks);
  return m;
}

ProgressFor single_progress_line(const ProgressCallback& line, size_t total) {
  // Points of the calls before the current one, and of the current one.
  auto before = std::make_shared<std::pair<size_t, size_t>>(0, 0);
  return [line, total, before](size_t points) {
    before->first += before->second;
    before->second = points;
    const size_t done = before->first;
    return ProgressCallback([line, total, done, points](const MeasureProgress& p) {
      if (!line) return;
      MeasureProgress q = p;
      q.fraction = total > 0 ? (double(done) + p.fraction * double(points)) / double(total) : 1.0;
      q.measured = done + p.measured;
      q.finished = p.finished && done + points >= total;
      line(q);
    });
  };
}

}  // namespace shapescope
