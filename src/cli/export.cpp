// `shapescope export`: stored points with their annotations as CSV, JSON or a table, from a store,
// on any machine (no GPU needed). The store is only read.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "report/output.hpp"
#include "store/store.hpp"
#include "views/plot_select.hpp"

namespace shapescope {
namespace {

struct ExportOptions {
  PlotFilter filter;
  std::string db = kDefaultStore;
  Format format = Format::kCsv;
  std::string out = "-";  // standard output
  bool wide = false;
  bool force = false;
};

void run_export(const ExportOptions& o) {
  check_wide(o.wide, o.format);
  const bool to_stdout = o.out == "-";
  if (!to_stdout) check_output_path(o.out, "--out", {o.db}, store_at_output(o.force));
  const Store store(o.db, Store::Access::kReadOnly);
  const Selection s = select_points(store.load_all(), o.db, o.filter, Algos::kAll, "export", store, Mixes::kKeep);
  if (!s.note.empty()) fmt::print(stderr, "{}\n", s.note);
  const KernelNames names = o.wide ? KernelNames::kWhole : KernelNames::kShort;
  if (to_stdout) {
    write_points(std::cout, o.format, s.points, s.annotations, names);
    return;
  }
  OutputFile out(o.out, "--out");
  write_points(out.stream(), o.format, s.points, s.annotations, names);
  out.commit();
  announce(fmt::format("export: {} points from '{}' to '{}'", s.points.size(), o.db, o.out));
}

}  // namespace

void register_export(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  auto* cmd = app.add_subcommand("export", "Stored points with their annotations as CSV, JSON or a table (no GPU needed)");
  cmd->footer(
      "The selection options are plot's: none given exports every cold point; a re-measured key is\n"
      "exported once (the newest). Points of several GPUs, dtypes or layouts may be mixed.\n"
      "Examples:\n"
      "  shapescope export --db h200.db --out points.csv\n"
      "  shapescope export --db h200.db --n 1..4096 --backend cublas --format json --out squares.json\n"
      "  shapescope export --db h200.db --n 1791..1793 --format table [--wide]\n"
      "  shapescope export --db merged.db --gpu h100 --format json   # the points of H100 SXM GPUs\n"
      "  shapescope export --db merged.db --gpu-name 'H100 80GB HBM3'   # by the name the store records\n"
      "Exit codes: 0 ok, 2 bad option or an empty selection, 5 result store unusable, 6 the output could\n"
      "not be written (disk full, standard output closed).");
  add_db_option(cmd, o->db, "result store (SQLite file), opened read-only");
  add_format_options(cmd, o->format, o->wide, "csv | json | table");
  add_out_option(cmd, o->out, "a file name, or - for standard output",
                 "write to this file (replaced only when the export succeeds); - for standard output");
  cmd->add_flag("--force", o->force, kForceHelp);
  add_selection_options(cmd, o->filter);
  cmd->callback([o] { run_export(*o); });
}

}  // namespace shapescope
