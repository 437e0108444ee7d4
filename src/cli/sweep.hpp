// `shapescope sweep`'s options and the parts of the command shared by its two ways of running:
// in this process on one GPU (sweep.cpp) or as the parent of one worker per GPU (--devices,
// sweep_devices.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/predict_options.hpp"
#include "common/output_file.hpp"
#include "core/records.hpp"
#include "measure/measure.hpp"
#include "measure/workers.hpp"
#include "model/annotate.hpp"
#include "report/output.hpp"
#include "shape/plan.hpp"
#include "store/store.hpp"

namespace shapescope {

struct SweepOptions {
  ShapeOptions shape;
  std::vector<BackendSpec> backends = {BackendSpec(BackendKind::kCublas)};
  int lt_algos = 1;
  TimingOptions timing;       // --samples or the stopping rule, --clocks, --warmup-ms
  bool hot = false;
  bool verbose = false;       // --verbose: where the wall time went, the samples histogram, the sentinel
  bool force = false;
  bool wide = false;          // --wide: kernel names whole in the table
  bool dry_run = false;
  bool casts = false;         // --casts: each fp8 GEMM's two casts measured too (backend cast)
  std::string db = kDefaultStore;
  Format format = Format::kTable;
  std::string out;
  std::string shard;
  int device = 0;
  std::string devices;        // --devices: all | 0,2,... (empty: one GPU, in this process)
  int report_fd = -1;         // a --devices worker: reports go to this fd (hidden option)
  int queue_fd = -1;          // a --devices worker: its chunks come from this fd (hidden option)
  uint64_t seed = 0x5eed;
  bool format_given = false;  // --format on the command line (set by the callback)
  bool device_given = false;  // --device on the command line (set by the callback)
  PredictOptions predict;     // --dry-run --predict: the plan's predicted times
  const GpuProfile* gpu = nullptr;  // --gpu: the GPU --predict predicts for
};

// The points as a table, CSV or JSON to stdout, or to --out (committed unless interrupted).
void write_points_out(const SweepOptions& o, const std::vector<StoredPoint>& points,
                      const std::vector<Annotation>& annotations, bool interrupted, std::optional<OutputFile>& out_file);

// The points (table, CSV or JSON to stdout or --out), the summary line on stderr (`gpus` the
// sweep ran on), and for an interrupted sweep the line that says what is saved (then
// Error(kInterrupted)).
void finish_sweep(const SweepOptions& o, const std::vector<StoredPoint>& points,
                  const std::vector<Annotation>& annotations, const SweepTotals& totals,
                  std::optional<OutputFile>& out_file, size_t gpus);

// --devices: one worker process per GPU, each taking chunks of `problems` (the plan, or its --shard)
// from one queue, all writing o.db; one progress line; the points and the summary as a single sweep
// prints them, and a line per GPU. Error naming the GPU when a worker fails.
void run_sweep_on_devices(const SweepOptions& o, const std::vector<Problem>& problems);

// A --devices worker: says its GPU, then measures each chunk the parent hands it (the request's
// problems at the chunk's positions) and reports it done, until the parent says end.
void run_queue_worker(const SweepOptions& o, const MeasureRequest& request, Store& store, const DeviceContext& device);

}  // namespace shapescope
