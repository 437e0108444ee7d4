// shapescope info [--calibrate]: the GPU, its SMs, clocks and library versions; with --calibrate,
// the measured peak GEMM rate per dtype and copy bandwidth, stored for later "% of peak" figures;
// --model: a performance model and its stated error (no GPU).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <vector>
#include <optional>

#include "cli/commands.hpp"
#include "cli/predict_options.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "device/device.hpp"
#include "device/nvml.hpp"
#include "model/input_file.hpp"
#include "model/perf_model.hpp"
#include "report/perf_model_report.hpp"
#include "store/store.hpp"
#include "timing/calibrate.hpp"

namespace shapescope {
namespace {

struct InfoOptions {
  int device = 0;
  bool calibrate = false;
  std::string db = kDefaultStore;
  std::string model;  // --model FILE; "" with --model alone: the models shapescope ships
};

// The performance models (calibrate-model's): the file given, else every one shipped (gpus/*.json).
void print_models(const std::string& file) {
  std::vector<std::string> files;
  if (!file.empty()) {
    files.push_back(file);
  } else {
    files = shipped_perf_model_files();
    if (files.empty()) throw usage_error(fmt::format("--model: no performance model shipped in '{}'", data_dir("gpus")));
  }
  std::vector<PerfModel> models;
  for (const std::string& f : files) {
    const std::string origin = "--model: '" + f + "'";
    models.push_back(read_perf_model(read_text_file(f, origin), origin));
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (i) fmt::print("\n");
    fmt::print("{}\n", files[i]);
    write_perf_model_text(std::cout, models[i]);
  }
}

void run_info(const InfoOptions& o) {
  // Only --calibrate writes: the store is opened read-only otherwise, and not made when missing.
  std::optional<Store> store;
  if (o.calibrate || std::filesystem::exists(std::filesystem::symlink_status(o.db)))
    store.emplace(o.db, o.calibrate ? Store::Access::kReadWrite : Store::Access::kReadOnly);
  const DeviceContext d = query_device(o.device);
  int64_t free_bytes = 0, total_bytes = 0;
  memory_info(free_bytes, total_bytes);
  auto nvml = NvmlDevice::open(d.pci_bus_id);
  fmt::print("GPU {}            {}\n", d.ordinal, d.gpu_name);
  fmt::print("UUID             {}\n", d.gpu_uuid);
  fmt::print("PCI bus          {}\n", d.pci_bus_id);
  fmt::print("compute cap.     {}.{}\n", d.cc_major, d.cc_minor);
  fmt::print("SMs              {}\n", d.sm_count);
  fmt::print("per SM           {} KiB shared memory, {} registers, {} threads\n",
             d.max_smem_per_sm / 1024, d.max_regs_per_sm, d.max_threads_per_sm);
  fmt::print("L2               {}\n", mib(double(d.l2_bytes), 1));
  fmt::print("memory           {} ({} free)\n", gib(double(total_bytes), 1), gib(double(free_bytes), 1));
  if (nvml) {
    const NvmlReading r = nvml->read();
    fmt::print("SM clock         {} MHz now, {} MHz max{}\n", r.sm_clock_mhz, r.max_sm_clock_mhz,
               r.reasons ? fmt::format(" (clock events: {})", throttle_names(r.reasons)) : "");
    if (r.temperature_c) fmt::print("temperature      {} C\n", *r.temperature_c);
    if (r.power_w) fmt::print("power            {:.0f} W\n", *r.power_w);
  } else {
    fmt::print("SM clock         {} MHz max (NVML not available: no current clock)\n",
               d.max_sm_clock_mhz);
  }
  fmt::print("driver           {}\n", d.driver);
  fmt::print("CUDA runtime     {}\n", d.cuda_runtime);
  fmt::print("cuBLAS           {}\n", d.cublas);
  fmt::print("cuBLASLt         {}\n", d.cublaslt);

  if (o.calibrate) {
    fmt::print(stderr, "calibrating: a large GEMM per dtype and a device-to-device copy...\n");
    for (const auto& c : calibrate(d, &g_interrupted)) store->save_calibration(d, c);
  }
  if (!store) {
    fmt::print("measured peaks   none (no store '{}'; run shapescope info --calibrate)\n", o.db);
    return;
  }
  const auto peaks = store->load_calibration(d);
  if (peaks.empty()) {
    fmt::print("measured peaks   none in {} (run shapescope info --calibrate)\n", o.db);
    return;
  }
  for (const auto& c : peaks) {
    const bool bandwidth = c.what == "bandwidth";
    fmt::print("peak {:<11} {:.1f} {}  (measured {}: {})\n",
               bandwidth ? "copy" : c.what.substr(c.what.find(':') + 1), c.value,
               bandwidth ? "GB/s" : "TFLOP/s", c.measured_at, c.detail);
  }
}

}  // namespace

void register_info(CLI::App& app) {
  auto options = std::make_shared<InfoOptions>();
  auto* cmd = app.add_subcommand("info", "The GPU: SMs, L2, memory, clocks, driver and library versions");
  cmd->footer("Examples:\n  shapescope info\n  shapescope info --calibrate    # measure peak TFLOP/s and bandwidth, keep them in the store\n"
              "  shapescope info --model        # the performance models shipped, each with its held-out error");
  add_device_option(cmd, options->device);
  cmd->add_flag("--calibrate", options->calibrate,
                "measure peak dense TFLOP/s per dtype and copy bandwidth, and store them");
  add_db_option(cmd, options->db, "result store (SQLite file)");
  CLI::Option* model = cmd->add_option("--model", options->model,
                                       "print a performance model (calibrate-model's JSON) with its stated error; "
                                       "--model alone: the ones shapescope ships (no GPU needed)")
                           ->expected(0, 1);
  cmd->callback([options, model] { model->count() ? print_models(options->model) : run_info(*options); });
}

}  // namespace shapescope
