// A measured performance model of one GPU: a GEMM's time where nothing was measured, fitted on the
// points of a sweep and checked on points the fit never saw. Pure C++.
//
// Per class of problem (dtype, layout, and the alignment its rows and bases reach: 16, 8, 4, 2 or 1
// bytes, which decides the kernel family a library runs) the model keeps every measured shape with
// its time and the kernel the library ran on it (tile, split-K slices, slots: CTAs that run at once).
// A new shape's time (model/perf_neighbours.hpp) is the launch floor (the GPU's: the median time of
// its smallest measured GEMMs) plus its work (2 M N K, K rounded up to the kernel's K block) at the
// rate a local fit over the 24 nearest measured shapes in log batch x M, N, K and batch gives at its
// sizes (the log of each one's time above the floor over its work, weighted by nearness, linear in the
// logs, no faster than the fastest of them). An unaligned class predicts from its aligned class (dtype
// and layout the same; it is measured far more densely) times the ratio its own 4 nearest shapes show
// to that class's prediction, where its nearest shape lies within about 10 % in the log sizes; farther,
// that prediction's time above the floor to the power 0.3 times its own local fit's (over 48 shapes)
// to the power 0.7; without an aligned class, from its own shapes alone. The class's memory
// bandwidth, fitted on its memory-bound points that move 64 MiB or more (else on those of all
// classes, else the vendor's: `bandwidth_source` says which), says whether a prediction is
// memory-bound.
// Stated error: every fourth measured shape of a class (in M, N, K order) predicted from the others,
// leaving out also every shape that shares its M, N or K, so that its neighbours lie as far from it
// as a new shape's between the measured grid's lines.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/problem.hpp"

namespace shapescope {

// One measured GEMM as the fit reads it. tile_m == 0: its kernel's tile is unknown (it then serves
// the floor and the bandwidth, not a kernel configuration).
struct PerfSample {
  Problem problem;
  double median_us = 0;
  int tile_m = 0, tile_n = 0;  // the CTA tile along the user's M and N
  int64_t splits = 1;          // split-K slices
  int64_t slots = 0;           // CTAs the GPU ran at once (the waves' slots)
};

struct PerfKernelConfig {
  int tile_m = 0, tile_n = 0;
  int64_t splits = 1, slots = 0;
  double rate_tflops = 0;  // the median of its shapes' rates (all slots busy), for the record
  int64_t points = 0;      // training points of this configuration
};

struct PerfAccuracy {
  int64_t points = 0;           // held-out points predicted
  double median = 0, p95 = 0;   // |predicted / measured - 1|
};

struct PerfClass {
  DType dtype = DType::kBf16;
  Layout layout = Layout::kNN;
  int64_t align_bytes = 16;  // the least of the operands' row and base alignment, at most 16
  std::vector<PerfKernelConfig> configs;
  struct Kernel {
    int64_t m = 0, n = 0, k = 0, batch = 1;
    size_t config = 0;
    double us = 0;         // its measured time
    // An unaligned class's: log(time above the floor / the aligned class's prediction above it); 0
    // in an aligned class, or where the class has no aligned class.
    double log_ratio = 0;
    double log_m = 0, log_n = 0, log_k = 0, log_batch = 0;  // of m, n, k, batch: set by set_logs()
    void set_logs();
  };
  std::vector<Kernel> kernels;  // the measured shapes, the configuration each ran and its time
  bool from_aligned = false;    // predicts through its aligned class's prediction and its ratio to it
  double bandwidth_gbs = 0;
  std::string bandwidth_source;  // "fitted", "fitted on all classes", "vendor datasheet"
  int64_t min_m = 0, max_m = 0, min_n = 0, max_n = 0, min_k = 0, max_k = 0;  // the measured range
  // The measured batches: not in the file, taken from the kernels where the class is made or read
  // (note_batches), so that a prediction does not scan them.
  int64_t min_batch = 1, max_batch = 1;
  PerfAccuracy accuracy;  // on the held-out points
};

// Sets the class's min_batch and max_batch from its kernels (none: 1..1).
void note_batches(PerfClass& c);

// A model measured on one GPU and used for another (scale_perf_model, model/perf_predict.hpp): a
// prediction's time above the launch floor splits into its memory share (the problem's least bytes at
// its class's fitted bandwidth, at most the whole) and the rest (compute). Of the memory share, the
// bytes' time at the measured GPU's DRAM bandwidth (datasheet) is scaled by the two GPUs' DRAM
// bandwidths; the rest of it (a class slower than DRAM: narrow loads of unaligned rows) and the
// compute by their SM clocks; the launch floor is kept.
struct PerfScaling {
  std::string from_gpu;          // the GPU the model was measured on
  std::string from_key;          // its profile's key ("h100-sxm")
  double from_clock_mhz = 0, to_clock_mhz = 0;
  double from_bandwidth_gbs = 0, to_bandwidth_gbs = 0;  // vendor datasheets
  // "memory time at DRAM speed x 0.698 (DRAM 3350 -> 4800 GB/s), the rest x 1.000 (SM clock 1980 ->
  // 1980 MHz), launch floor kept; measured on NVIDIA H100 80GB HBM3"
  std::string terms() const;
};

struct PerfModel {
  std::string gpu;       // the device name the points were measured on (scaled: the GPU predicted for)
  int sm_count = 0;
  std::string source;    // what it was fitted on (a store's path, a samples file)
  std::string driver, cublas;
  double clock_mhz = 0;  // the median SM clock of the points
  double floor_us = 0;
  int64_t points = 0, held_out = 0;
  std::vector<PerfClass> classes;
  // The class of the same dtype and layout with 16-byte aligned rows: where an unaligned class reads
  // its aligned class's prediction; null where the model has none.
  const PerfClass* aligned_class(const PerfClass& c) const;
  std::optional<PerfScaling> scaled;  // set when scaled to another GPU; never written to JSON
};

// The samples of one GPU, with what identifies the measurements.
struct PerfSampleSet {
  std::vector<PerfSample> samples;
  std::string gpu;  // the device name ("NVIDIA H100 80GB HBM3")
  int sm_count = 0;
  std::string driver, cublas;
  double clock_mhz = 0;  // the points' median SM clock; 0 when none was recorded
};

// The GPU's vendor figures the fit sorts points by (the compute/memory ridge) and falls back on (the
// bandwidth), found by the name the device reports; empty for a GPU the profiles lack.
struct PerfFitGpu {
  std::map<DType, double> peak_tflops;  // per dtype, vendor datasheet (a dtype missing: no ridge)
  double bandwidth_gbs = 0;             // vendor datasheet
  // FLOP per byte where a GEMM stops being memory-bound; 0 where the figures are missing.
  double ridge(DType dtype) const;
};
PerfFitGpu perf_fit_gpu(const std::string& gpu_name);

// The class a problem falls in: its alignment (least of A, B, C rows and bases, capped at 16 bytes).
int64_t perf_align_bytes(const Problem& p);

// Fits one model. Refuses (Error, kUsage) fewer than 8 samples of one class with known tiles,
// samples of a grouped call, a cast or an fp8 recipe other than tensor (the classes name no recipe).
// Deterministic: the same samples give the same model.
PerfModel fit_perf_model(const PerfSampleSet& set, const std::string& source);

struct PerfPrediction {
  double us = 0;
  double tflops = 0;
  const PerfClass* cls = nullptr;
  const PerfKernelConfig* config = nullptr;  // the nearest measured shape's kernel (of its own class)
  int64_t rounds = 0;                        // under that kernel
  bool memory_bound = false;
  const PerfScaling* scaled = nullptr;  // the model's scaling to another GPU, where it has one
  // Where the problem lies outside the measured range of its class ("M 20000 above the measured
  // 1..4096"); empty inside.
  std::vector<std::string> outside;
};

// nullopt with `why` set when the model has no class for the problem's dtype, layout and alignment
// (or the problem is grouped, a cast, or an fp8 GEMM of a recipe other than tensor).
std::optional<PerfPrediction> predict(const PerfModel& model, const Problem& p, std::string& why);

// The model as JSON text and back; read_perf_model refuses (Error, kUsage, naming `origin`) a
// document that is not one.
std::string perf_model_json(const PerfModel& model);
PerfModel read_perf_model(const std::string& text, const std::string& origin);

// Samples as CSV: a first line "# shapescope samples: gpu=...; sm_count=...; driver=...; cublas=...;
// clock_mhz=...", then the header m,n,k,batch,dtype,layout,lda,ldb,ldc,off_a,off_b,off_c,median_us,
// tile_m,tile_n,splits,slots and a row per sample: what `calibrate-model --samples-out` writes and
// `--samples` reads.
std::string perf_samples_csv(const PerfSampleSet& set);
PerfSampleSet read_perf_samples_csv(const std::string& text, const std::string& origin);

}  // namespace shapescope
