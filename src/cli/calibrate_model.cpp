// `shapescope calibrate-model`: a performance model of one GPU fitted on a store's points (or on a
// samples file), with its error on the points it held out; `--out` keeps it for `info --model`.
// No GPU needed: the store is only read.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "model/input_file.hpp"
#include "model/perf_model.hpp"
#include "report/perf_model_report.hpp"
#include "store/store.hpp"
#include "views/perf_samples.hpp"

namespace shapescope {
namespace {

struct CalibrateModelOptions {
  std::string db = kDefaultStore;
  std::string samples;      // a samples CSV instead of the store
  std::string out;          // the model's JSON
  std::string samples_out;  // the samples the fit read, as CSV
  bool force = false;
};

void run_calibrate_model(const CalibrateModelOptions& o, bool db_given) {
  if (!o.samples.empty() && db_given)
    throw usage_error("--samples: fits on a samples file instead of a store; give --samples or --db, not both");
  const std::string input = o.samples.empty() ? o.db : o.samples;
  for (const auto& [path, option] : {std::pair{o.out, "--out"}, std::pair{o.samples_out, "--samples-out"}})
    if (!path.empty()) check_output_path(path, option, {input}, store_at_output(o.force));
  if (!o.out.empty() && o.out == o.samples_out)
    throw usage_error(fmt::format("--samples-out: '{}' is --out's file too", o.out));
  PerfSampleSet set;
  if (o.samples.empty()) {
    const Store store(o.db, Store::Access::kReadOnly);
    PerfSamples got = perf_samples(store, o.db);
    set = std::move(got.set);
    if (got.skipped) fmt::print(stderr, "calibrate-model: {} points left out (another backend or algorithm, hot L2, "
                                        "grouped calls, casts)\n", got.skipped);
  } else {
    const std::string origin = "--samples: '" + o.samples + "'";
    set = read_perf_samples_csv(read_text_file(o.samples, origin), origin);
  }
  const PerfModel model = fit_perf_model(set, input);
  write_perf_model_text(std::cout, model);
  if (!o.out.empty()) write_whole_output(o.out, "--out", [&](std::ostream& out) { out << perf_model_json(model); });
  if (!o.samples_out.empty())
    write_whole_output(o.samples_out, "--samples-out", [&](std::ostream& out) { out << perf_samples_csv(set); });
  if (!o.out.empty() && o.out != "-") announce(fmt::format("calibrate-model: the model written to '{}'", o.out));
}

}  // namespace

void register_calibrate_model(CLI::App& app) {
  auto o = std::make_shared<CalibrateModelOptions>();
  auto* cmd = app.add_subcommand(
      "calibrate-model", "Fit a performance model of one GPU on a store's points, with its held-out error (no GPU needed)");
  cmd->footer(
      "The fit reads the store's cold-L2 points of cuBLAS's default algorithm, of one GPU: per dtype, layout\n"
      "and row alignment, each shape's time and kernel, and the bandwidth; every 4th shape is predicted from\n"
      "the others less those sharing its M, N or K to state the error. A sweep over the space the model\n"
      "should cover (a grid of M, N and K, aligned and not) feeds it best, e.g.\n"
      "  shapescope sweep --m 1..4096:7 --n 1..4096:7 --k 1024 --db h100.db   (on the GPU)\n"
      "Examples:\n"
      "  shapescope calibrate-model --db h100.db\n"
      "  shapescope calibrate-model --db h100.db --out h100-model.json --samples-out h100-samples.csv\n"
      "  shapescope calibrate-model --samples gpus/h100-sxm.samples.csv\n"
      "  shapescope info --model h100-model.json\n"
      "Exit codes: 0 ok, 2 bad option, a store of several GPUs or too few points, 5 result store unusable,\n"
      "6 an output could not be written.");
  CLI::Option* db = add_db_option(cmd, o->db, "result store (SQLite file) to fit on, opened read-only");
  cmd->add_option("--samples", o->samples, "fit on this samples file (CSV, as --samples-out writes) instead of a store");
  cmd->add_option("--out", o->out, "write the model (JSON) to this file, replaced only when the fit succeeds");
  cmd->add_option("--samples-out", o->samples_out, "write the samples the fit read (CSV) to this file");
  cmd->add_flag("--force", o->force, kForceHelp);
  cmd->callback([o, db] { run_calibrate_model(*o, db->count() > 0); });
}

}  // namespace shapescope
