// perf_model.hpp: the fit and the prediction. The JSON and CSV forms are in perf_model_io.cpp.
#include "model/perf_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "common/error.hpp"
#include "common/order_stats.hpp"
#include "model/alignment.hpp"
#include "model/device_profile.hpp"
#include "model/perf_neighbours.hpp"

namespace shapescope {

namespace {

constexpr int64_t kHoldOutEvery = 4;   // every 4th shape of a class, in M, N, K order
constexpr int64_t kMinClassPoints = 8;  // training points with known tiles a class needs
constexpr double kFloorShare = 0.02;    // the smallest 2 % of the aligned GEMMs set the floor
constexpr int64_t kMinFloorPoints = 5;
constexpr double kAboveFloor = 1.5;     // a point informs the bandwidth only when it takes this x the floor
// A prediction is memory-bound when its bytes at the class's bandwidth take this share of its time
// above the floor (the bandwidth is a median: a memory-bound shape's own may be a little higher).
constexpr double kMemoryShare = 0.8;
// A memory-bound point tells the bandwidth only when it moves this much (64 MiB: tens of microseconds
// at an H100's 3.35 TB/s); a smaller one is bound by latency, not by DRAM.
constexpr double kStreamingBytes = 64.0 * 1024 * 1024;
// An unaligned class's time above the floor: its own local fit's to this power times the aligned
// class's prediction times its ratio to it to the rest. The kernels cuBLAS runs on narrow rows differ
// from the aligned ones shape by shape (split-K slices, 64x64 or 128x128 tiles), so the aligned
// prediction's trend carries over only in part: in the held-out check of the H100's samples (the
// square sweep left out), the unaligned bf16 classes' median / p95 error was 10.9 / 48.0 % (nn),
// 10.0 / 39.8 % (nt), 9.2 / 42.5 % (tn) through the aligned class alone, 10.0 / 37.7, 8.8 / 33.0,
// 9.2 / 38.6 % with 0.7 of its own (0.5: 10.1 / 40.0, 8.9 / 34.0, 8.8 / 39.8 %; its own alone: 9.9 /
// 35.6, 9.2 / 33.1, 9.5 / 42.0 %); fp16's 14.8 / 61.1 -> 12.2 / 48.9 %, fp32's 15.2 / 61.1 -> 13.0 /
// 80.4 % (a p95 of 72 points: worse).
constexpr double kOwnShare = 0.7;
// ... where the class's nearest measured shape lies this far or farther (log sizes: about 10 %); nearer
// (a dense sweep), the ratio of the nearest shapes to the aligned class is the closer reading: the
// H200's square sweep's 4- and 8-byte classes' held-out median / p95 0.4 / 3.9 % and 0.9 / 5.2 % from
// it alone, 1.8 / 9.9 % and 2.9 / 11.3 % with the own fit's share everywhere (the H100's held-out
// medians move by 0.3 % at most with this distance anywhere between 0.05 and 0.2).
constexpr double kOwnFrom = 0.1;

double flops_of(const Problem& p) { return 2.0 * double(p.m) * double(p.n) * double(p.k) * double(p.batch); }

double min_bytes(const Problem& p) {
  const double in = input_bytes(p.dtype), out = output_bytes(p.dtype);
  return double(p.batch) * (in * (double(p.m) * double(p.k) + double(p.k) * double(p.n)) + out * double(p.m) * double(p.n));
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The work one slot does in sequence: rounds of one tile's FLOPs (its share of K when split).
double slot_work(const Problem& p, int tile_m, int tile_n, int64_t splits, int64_t slots, int64_t* rounds_out) {
  const int64_t tiles = ceil_div(p.m, tile_m) * ceil_div(p.n, tile_n) * p.batch * splits;
  const int64_t rounds = ceil_div(tiles, std::max<int64_t>(slots, 1));
  if (rounds_out) *rounds_out = rounds;
  return double(rounds) * 2.0 * tile_m * tile_n * (double(p.k) / double(splits));
}

using ClassKey = std::tuple<DType, Layout, int64_t>;

ClassKey class_of(const Problem& p) { return {p.dtype, p.layout, perf_align_bytes(p)}; }

bool same_config(const PerfKernelConfig& c, const PerfSample& s) {
  return c.tile_m == s.tile_m && c.tile_n == s.tile_n && c.splits == s.splits && c.slots == s.slots;
}

// A class's kernel configurations (each with its shapes' median rate, for the record) and its shapes.
void fit_configs(PerfClass& c, const std::vector<const PerfSample*>& train, double floor_us) {
  std::map<size_t, std::vector<double>> rates;
  for (const PerfSample* s : train) {
    if (s->tile_m <= 0 || s->tile_n <= 0 || s->slots <= 0) continue;
    auto it = std::find_if(c.configs.begin(), c.configs.end(), [&](const PerfKernelConfig& k) { return same_config(k, *s); });
    if (it == c.configs.end()) it = c.configs.insert(c.configs.end(), {s->tile_m, s->tile_n, s->splits, s->slots, 0, 0});
    const size_t index = size_t(it - c.configs.begin());
    ++it->points;
    const double above = perf_above_floor(s->median_us, floor_us);
    const double rate = slot_work(s->problem, s->tile_m, s->tile_n, s->splits, s->slots, nullptr) / above *
                        double(s->slots) / 1e6;
    PerfClass::Kernel k;
    k.m = s->problem.m, k.n = s->problem.n, k.k = s->problem.k, k.batch = s->problem.batch;
    k.config = index, k.us = s->median_us;
    k.set_logs();
    c.kernels.push_back(k);
    rates[index].push_back(rate);
  }
  for (const auto& [i, r] : rates) c.configs[i].rate_tflops = median_of(r);
}

// Bytes per microsecond of the memory-bound samples above the floor; empty when there are none.
std::vector<double> bandwidths(const std::vector<const PerfSample*>& train, double floor_us, const PerfFitGpu& gpu) {
  std::vector<double> out;
  for (const PerfSample* s : train)
    if (flops_of(s->problem) / min_bytes(s->problem) < gpu.ridge(s->problem.dtype) &&
        min_bytes(s->problem) >= kStreamingBytes && s->median_us >= kAboveFloor * floor_us)
      out.push_back(min_bytes(s->problem) / (s->median_us - floor_us));
  return out;
}

void note_range(PerfClass& c, const std::vector<const PerfSample*>& train) {
  c.min_m = c.min_n = c.min_k = std::numeric_limits<int64_t>::max();
  for (const PerfSample* s : train) {
    c.min_m = std::min(c.min_m, s->problem.m), c.max_m = std::max(c.max_m, s->problem.m);
    c.min_n = std::min(c.min_n, s->problem.n), c.max_n = std::max(c.max_n, s->problem.n);
    c.min_k = std::min(c.min_k, s->problem.k), c.max_k = std::max(c.max_k, s->problem.k);
  }
}

void check_samples(const std::vector<PerfSample>& samples) {
  for (const PerfSample& s : samples) {
    if (s.problem.grouped() || s.problem.cast != CastOperand::kNone)
      throw usage_error("calibrate-model: a grouped call or an fp8 cast is no GEMM the model fits (" +
                        s.problem.shape_string() + ")");
    if (s.problem.recipe != Fp8Recipe{})
      throw usage_error(fmt::format("calibrate-model: {} is an fp8 GEMM of the {} recipe; the model holds the tensor "
                                    "recipe's (one scale per operand)",
                                    s.problem.shape_string(), recipe_text(s.problem.recipe)));
    if (!(s.median_us > 0) || !std::isfinite(s.median_us))
      throw usage_error(fmt::format("calibrate-model: {} has no positive time ({})", s.problem.shape_string(),
                                    s.median_us));
  }
}

// The launch floor: the median time of the smallest 2 % of the GEMMs whose rows are 16-byte aligned
// (of all of them where fewer than kMinFloorPoints are). Narrower rows run slower kernels whose smallest
// shapes take longer than a launch: with a grid of unaligned shapes among the smallest, the floor of
// all GEMMs read 7.26 us against 6.05 us from the aligned ones (+20 %), and the aligned classes' p95
// error on a separate sweep rose from 13 % to 22 %.
double floor_of(std::vector<const PerfSample*> train) {
  std::vector<const PerfSample*> aligned;
  for (const PerfSample* s : train)
    if (perf_align_bytes(s->problem) == 16) aligned.push_back(s);
  if (aligned.size() >= size_t(kMinFloorPoints)) train = aligned;
  std::sort(train.begin(), train.end(),
            [](const PerfSample* a, const PerfSample* b) { return flops_of(a->problem) < flops_of(b->problem); });
  const size_t n = std::min(train.size(), std::max<size_t>(kMinFloorPoints, size_t(kFloorShare * double(train.size()))));
  std::vector<double> times;
  for (size_t i = 0; i < n; ++i) times.push_back(train[i]->median_us);
  return median_of(times);
}

Problem problem_of(const PerfClass& c, const PerfClass::Kernel& k) {
  Problem p;
  p.m = k.m, p.n = k.n, p.k = k.k, p.batch = k.batch, p.dtype = c.dtype, p.layout = c.layout;
  return p;
}

// The time of `p` in class `c` (which holds kernels), and the index of the nearest shape of `c`
// (whose kernel the prediction assumes).
double predicted_us(const PerfModel& model, const PerfClass& c, const Problem& p, PerfLeaveOut out, size_t& nearest) {
  const PerfClass* aligned = c.from_aligned ? model.aligned_class(c) : nullptr;
  if (!aligned) {
    const PerfNeighbourFit fit = perf_local_fit(c, p, model.floor_us, out);
    nearest = fit.nearest;
    return fit.us;
  }
  const PerfRatio ratio = perf_log_ratio_near(c, p, out);
  nearest = ratio.nearest;
  if (ratio.distance == 0) return c.kernels[nearest].us;  // measured
  const PerfNeighbourFit base = perf_local_fit(*aligned, p, model.floor_us, out);
  const double via_aligned = perf_above_floor(base.us, model.floor_us) * std::exp(ratio.log_ratio);
  if (ratio.distance < kOwnFrom) return model.floor_us + via_aligned;
  const double own = perf_above_floor(perf_local_fit(c, p, model.floor_us, out).us, model.floor_us);
  return model.floor_us + std::exp(kOwnShare * std::log(own) + (1 - kOwnShare) * std::log(via_aligned));
}

// An unaligned class's shapes' ratios to their aligned class's prediction, where the model has one.
void fit_ratios(const PerfModel& model, PerfClass& c) {
  const PerfClass* aligned = model.aligned_class(c);
  if (!aligned || aligned == &c) return;
  c.from_aligned = true;
  for (PerfClass::Kernel& k : c.kernels) {
    const PerfNeighbourFit base = perf_local_fit(*aligned, problem_of(c, k), model.floor_us);
    k.log_ratio = std::log(perf_above_floor(k.us, model.floor_us) / perf_above_floor(base.us, model.floor_us));
  }
}

// Every fourth shape of the class (kernels are in M, N, K order) predicted from the others less those
// that share its M, N or K; a size at the edge of the class's measured range keeps its line (without
// it the prediction would be an extrapolation, which the stated error does not claim to cover).
PerfAccuracy held_out_error(const PerfModel& model, const PerfClass& c) {
  std::vector<double> errors;
  for (size_t i = kHoldOutEvery - 1; i < c.kernels.size(); i += kHoldOutEvery) {
    const PerfClass::Kernel& k = c.kernels[i];
    const auto inside = [](int64_t v, int64_t lo, int64_t hi) { return v > lo && v < hi; };
    const PerfLeaveOut out{true, inside(k.m, c.min_m, c.max_m), inside(k.n, c.min_n, c.max_n), inside(k.k, c.min_k, c.max_k)};
    size_t nearest = 0;
    const double us = predicted_us(model, c, problem_of(c, k), out, nearest);
    errors.push_back(std::abs(us / k.us - 1));
  }
  return {int64_t(errors.size()), median_of(errors), quantile_of(errors, 0.95)};
}

}  // namespace

void PerfClass::Kernel::set_logs() {
  log_m = std::log(double(m)), log_n = std::log(double(n)), log_k = std::log(double(k));
  log_batch = std::log(double(batch));
}

std::string PerfScaling::terms() const {
  return fmt::format("memory time at DRAM speed x {:.3f} (DRAM {:.0f} -> {:.0f} GB/s), the rest x {:.3f} (SM clock {:.0f} -> "
                     "{:.0f} MHz), launch floor kept; measured on {}",
                     from_bandwidth_gbs / to_bandwidth_gbs, from_bandwidth_gbs, to_bandwidth_gbs,
                     from_clock_mhz / to_clock_mhz, from_clock_mhz, to_clock_mhz, from_gpu);
}

const PerfClass* PerfModel::aligned_class(const PerfClass& c) const {
  for (const PerfClass& a : classes)
    if (a.dtype == c.dtype && a.layout == c.layout && a.align_bytes == kRuleBytes && !a.kernels.empty()) return &a;
  return nullptr;
}

double PerfFitGpu::ridge(DType dtype) const {
  const auto it = peak_tflops.find(dtype);
  return it == peak_tflops.end() || !(bandwidth_gbs > 0) ? 0 : it->second * 1e12 / (bandwidth_gbs * 1e9);
}

int64_t perf_align_bytes(const Problem& p) {
  const Alignment a = alignment_of(p);
  int64_t bytes = kRuleBytes;
  for (const OperandAlignment* o : {&a.a, &a.b, &a.c}) bytes = std::min({bytes, o->ld_bytes, o->base_bytes});
  return std::max<int64_t>(bytes, 1);
}

PerfFitGpu perf_fit_gpu(const std::string& gpu_name) {
  PerfFitGpu gpu;
  if (const GpuProfile* profile = profile_for_device_name(gpu_name)) {
    gpu.bandwidth_gbs = profile->bandwidth_gbs;
    for (DType d : {DType::kBf16, DType::kFp16, DType::kTf32, DType::kFp32, DType::kFp8})
      if (profile->vendor_tflops(d) > 0) gpu.peak_tflops[d] = profile->vendor_tflops(d);
  }
  return gpu;
}

PerfModel fit_perf_model(const PerfSampleSet& set, const std::string& source) {
  const std::vector<PerfSample>& samples = set.samples;
  const PerfFitGpu gpu = perf_fit_gpu(set.gpu);
  check_samples(samples);
  std::map<ClassKey, std::vector<const PerfSample*>> by_class;
  for (const PerfSample& s : samples) by_class[class_of(s.problem)].push_back(&s);
  PerfModel model;
  model.gpu = set.gpu;
  model.sm_count = set.sm_count;
  model.source = source;
  model.driver = set.driver;
  model.cublas = set.cublas;
  model.clock_mhz = set.clock_mhz;
  std::vector<const PerfSample*> all;
  for (auto& [key, list] : by_class) {
    std::stable_sort(list.begin(), list.end(), [](const PerfSample* a, const PerfSample* b) {
      return std::tie(a->problem.m, a->problem.n, a->problem.k) < std::tie(b->problem.m, b->problem.n, b->problem.k);
    });
    all.insert(all.end(), list.begin(), list.end());
  }
  model.floor_us = floor_of(all);
  const std::vector<double> any_bw = bandwidths(all, model.floor_us, gpu);
  for (const auto& [key, list] : by_class) {
    PerfClass c;
    std::tie(c.dtype, c.layout, c.align_bytes) = key;
    fit_configs(c, list, model.floor_us);
    if (int64_t(c.kernels.size()) < kMinClassPoints) continue;  // too few to fit: no class
    note_range(c, list);
    note_batches(c);
    // The class's own streaming points, else all classes' (bytes are bytes), else the vendor's figure.
    const std::vector<double> bw = bandwidths(list, model.floor_us, gpu);
    if (bw.size() >= size_t(kMinFloorPoints)) {
      c.bandwidth_gbs = median_of(bw) / 1e3, c.bandwidth_source = "fitted";
    } else if (any_bw.size() >= size_t(kMinFloorPoints)) {
      c.bandwidth_gbs = median_of(any_bw) / 1e3, c.bandwidth_source = "fitted on all classes";
    } else {
      c.bandwidth_gbs = gpu.bandwidth_gbs, c.bandwidth_source = "vendor datasheet";
    }
    model.classes.push_back(std::move(c));
  }
  if (model.classes.empty())
    throw usage_error(fmt::format("calibrate-model: no class of problems has {} measured points with known kernel "
                                  "tiles (the fit needs them): {} points given",
                                  kMinClassPoints, samples.size()));
  for (PerfClass& c : model.classes) fit_ratios(model, c);
  for (PerfClass& c : model.classes) {
    c.accuracy = held_out_error(model, c);
    model.held_out += c.accuracy.points;
    model.points += int64_t(c.kernels.size());
  }
  return model;
}

std::optional<PerfPrediction> predict(const PerfModel& model, const Problem& p, std::string& why) {
  if (p.grouped() || p.cast != CastOperand::kNone) {
    why = "the model holds ordinary GEMMs: not a grouped call or a cast";
    return std::nullopt;
  }
  if (p.recipe != Fp8Recipe{}) {
    why = fmt::format("the model holds fp8 GEMMs of the tensor recipe (one scale per operand), not of the {} recipe",
                      recipe_text(p.recipe));
    return std::nullopt;
  }
  const int64_t align = perf_align_bytes(p);
  const auto c = std::find_if(model.classes.begin(), model.classes.end(), [&](const PerfClass& k) {
    return k.dtype == p.dtype && k.layout == p.layout && k.align_bytes == align;
  });
  if (c == model.classes.end() || c->kernels.empty()) {
    why = fmt::format("the model of {} has no {} {} GEMMs with {}-byte aligned rows: none were measured", model.gpu,
                      to_string(p.dtype), to_string(p.layout), align);
    return std::nullopt;
  }
  PerfPrediction out;
  out.cls = &*c;
  size_t nearest = 0;
  out.us = predicted_us(model, *c, p, {}, nearest);
  const PerfKernelConfig& k = c->configs[c->kernels[nearest].config];
  out.config = &k;
  slot_work(p, k.tile_m, k.tile_n, k.splits, k.slots, &out.rounds);
  const double bytes = min_bytes(p);
  double memory_us = bytes / (c->bandwidth_gbs * 1e3);
  if (const auto& s = model.scaled) {
    out.scaled = &*s;
    // Only the bytes' time at the measured GPU's DRAM bandwidth follows the DRAM; a class that moves
    // its bytes slower than that (narrow loads of unaligned rows) is held by its loads, which run at
    // the SM clock, for the rest.
    const double above = out.us - model.floor_us, memory = std::min(memory_us, above);
    const double dram = std::min(memory, bytes / (s->from_bandwidth_gbs * 1e3));
    const double bandwidth = s->from_bandwidth_gbs / s->to_bandwidth_gbs, clock = s->from_clock_mhz / s->to_clock_mhz;
    out.us = model.floor_us + dram * bandwidth + (above - dram) * clock;
    memory_us = dram * bandwidth + (memory_us - dram) * clock;
  }
  out.memory_bound = memory_us >= kMemoryShare * (out.us - model.floor_us);
  out.tflops = flops_of(p) / (out.us * 1e6);
  const auto range = [&](const char* name, int64_t v, int64_t lo, int64_t hi) {
    if (v < lo || v > hi) out.outside.push_back(fmt::format("{} {} outside the measured {}..{}", name, v, lo, hi));
  };
  range("M", p.m, c->min_m, c->max_m);
  range("N", p.n, c->min_n, c->max_n);
  range("K", p.k, c->min_k, c->max_k);
  // A class measured unbatched would predict a batch of 100000 by its M alone.
  range("batch", p.batch, c->min_batch, c->max_batch);
  return out;
}

void note_batches(PerfClass& c) {
  c.min_batch = c.max_batch = 1;
  if (c.kernels.empty()) return;
  const auto [least, most] = std::minmax_element(
      c.kernels.begin(), c.kernels.end(),
      [](const PerfClass::Kernel& a, const PerfClass::Kernel& b) { return a.batch < b.batch; });
  c.min_batch = least->batch, c.max_batch = most->batch;
}

}  // namespace shapescope
