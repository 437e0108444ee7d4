// `shapescope plot KIND`: pictures of stored measurements, drawn by gnuplot (SVG with hover text on
// every point, and PNG), with the gnuplot script and the data kept beside them. Reads the store
// only: it works on any machine, with or without a GPU.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <optional>

#include "cli/commands.hpp"
#include "cli/plot.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "model/device_profile.hpp"
#include "model/explain.hpp"
#include "report/output.hpp"
#include "report/plot_figures.hpp"
#include "report/plot_gnuplot.hpp"
#include "views/plot_select.hpp"
#include "shape/plan.hpp"
#include "store/store.hpp"

namespace shapescope {
namespace {

constexpr std::array<PlotKind, 8> kKinds = {PlotKind::kFlops,   PlotKind::kRuntime, PlotKind::kWaves,
                                             PlotKind::kKernels, PlotKind::kCompare, PlotKind::kHeatmap,
                                             PlotKind::kTilegrid, PlotKind::kRoofline};

std::string kinds_text() {
  std::string text;
  for (PlotKind k : kKinds) text += (text.empty() ? "" : ", ") + std::string(to_string(k));
  return text;
}

// KIND, read once: every later choice is on the enum.
PlotKind plot_kind_option(const std::string& text) {
  for (PlotKind k : kKinds)
    if (text == to_string(k)) return k;
  throw usage_error(fmt::format("KIND: '{}' is not a plot kind ({})", text, kinds_text()));
}

// The model's tile grid for a GPU profile and a tile: nothing stored is read.
void run_tilegrid_model(const PlotOptions& o, const ShapeArg& shape) {
  const GpuProfile* profile = o.filter.gpu;
  const auto& tile = o.tile;
  if (!profile)
    throw usage_error(fmt::format("--tile: '{}x{}' needs --gpu KEY ({}) for a model prediction", tile->first,
                                  tile->second, profile_keys()));
  // The selection's options, typed as read, are the problem's form.
  ProblemForm form;
  form.dtype = o.filter.dtype.value_or(form.dtype);
  form.layout = o.filter.layout.value_or(form.layout);
  form.ld_pad = o.filter.ld_pad;
  form.offset = o.filter.offset;
  form.sizes_from = "--m, --n, --k";
  check_form(form);
  std::vector<Problem> problems;
  for (int64_t batch : o.filter.batch.values) {
    form.batch = batch;
    problems.push_back(form_problem(form, shape.m, shape.n, shape.k));
  }
  if (problems.size() != 1)
    throw usage_error(fmt::format("--batch: '{}' must be one value for tilegrid", o.filter.batch.text));
  const Annotation a = predict(problems.front(), model_gpu(*profile), tile->first, tile->second);
  const std::string title = fmt::format("model: {} ({} SMs), tile {}x{} given, one CTA per SM, data-parallel; nothing "
                                        "measured",
                                        profile->name, profile->sm_count, tile->first, tile->second);
  render(o, tilegrid_plot(problems.front(), a, title),
         fmt::format("tilegrid-{}-{}", o.shape, profile->key), title);
}

// The option checks that need no store; SHAPE parsed for tilegrid. Sets o.command_line.
std::optional<ShapeArg> checked_options(PlotOptions& o) {
  const bool tilegrid = o.kind == PlotKind::kTilegrid;
  // --out is a directory or a path prefix: a device or other special file is neither.
  if (o.out == "-")
    throw usage_error("--out: '-' (standard output) is not for plot, which writes four files: give a folder "
                      "(out/) or a path prefix (out/squares)");
  {
    std::error_code ec;
    const auto status = std::filesystem::status(o.out, ec);
    if (std::filesystem::exists(status) && !std::filesystem::is_directory(status) &&
        !std::filesystem::is_regular_file(status))
      throw usage_error(fmt::format("--out: '{}' is a device or other special file, not a directory or a path prefix",
                                    o.out));
  }
  check_templates(o.templates, {std::string(to_string(o.kind))});
  // Before tilegrid turns SHAPE into --m/--n/--k filters, which its command line does not take.
  o.command_line = command_line(o);
  std::optional<ShapeArg> shape;
  if (tilegrid) {
    if (o.shape.empty()) throw usage_error("SHAPE: plot tilegrid needs a shape (e.g. 1793 or 4096x1x4096)");
    shape = parse_shape_option(o.shape);
    for (const auto& [option, value] : {std::pair<const char*, const SizeFilter*>{"--m", &o.filter.m},
                                        {"--n", &o.filter.n}, {"--k", &o.filter.k}}) {
      if (!value->text.empty())
        throw usage_error(fmt::format("{}: '{}' is not for plot tilegrid, which takes its shape from SHAPE", option,
                                      value->text));
    }
  } else if (!o.shape.empty()) {
    throw usage_error(fmt::format("SHAPE: '{}' is only for plot tilegrid (plot {} takes --m/--n/--k)", o.shape,
                                  to_string(o.kind)));
  }
  if (o.tile && !tilegrid)
    throw usage_error(fmt::format("--tile: '{}x{}' is only for plot tilegrid", o.tile->first, o.tile->second));
  return shape;
}

// The figure of the selected points: the kinds but tilegrid, which draws one measured shape.
Plot figure(PlotKind kind, const Selection& s, const std::string& command, bool algos_given) {
  switch (kind) {
    case PlotKind::kFlops: return flops_plot(s, swept_axis(s.points, command));
    case PlotKind::kRuntime: return runtime_plot(s, swept_axis(s.points, command));
    case PlotKind::kWaves: return waves_plot(s, swept_axis(s.points, command));
    case PlotKind::kKernels: return kernels_plot(s, swept_axis(s.points, command));
    case PlotKind::kCompare: return compare_plot(s, swept_axis(s.points, command), algos_given);
    case PlotKind::kHeatmap: return heatmap_plot(s, grid_axes(s.points, command));
    case PlotKind::kRoofline: return roofline_plot(s);
    case PlotKind::kTilegrid: break;
  }
  throw Error(ExitCode::kInternal, fmt::format("plot: no figure of kind {}", to_string(kind)));
}

void run_plot(PlotOptions o) {
  const bool tilegrid = o.kind == PlotKind::kTilegrid;
  const std::string command = fmt::format("plot {}", to_string(o.kind));
  const std::optional<ShapeArg> shape = checked_options(o);
  if (tilegrid && o.tile) {
    run_tilegrid_model(o, *shape);
    return;
  }
  if (o.dbs.size() > 1) {
    plot_gpus(o);
    return;
  }
  const Store store(o.db, Store::Access::kReadOnly);
  const std::vector<StoredPoint> stored = store.load_all();
  if (tilegrid) {
    const bool have = std::any_of(stored.begin(), stored.end(), [&](const StoredPoint& p) {
      return p.key.problem.m == shape->m && p.key.problem.n == shape->n && p.key.problem.k == shape->k;
    });
    if (!have)
      throw usage_error(fmt::format("SHAPE: '{}' ({}x{}x{}) has no point in '{}'; measure it (shapescope explain {}) or "
                                    "draw the model with --gpu KEY --tile BMxBN",
                                    o.shape, shape->m, shape->n, shape->k, o.db, o.shape));
    // SHAPE's sizes select its points (their text for the messages).
    o.filter.m = SizeFilter{std::to_string(shape->m), {shape->m}};
    o.filter.n = SizeFilter{std::to_string(shape->n), {shape->n}};
    o.filter.k = SizeFilter{std::to_string(shape->k), {shape->k}};
  }

  std::optional<Store> calibration_store;
  if (!o.calibration.empty()) calibration_store.emplace(o.calibration, Store::Access::kReadOnly);
  const Store& calibrations = calibration_store ? *calibration_store : store;
  const Algos algos = o.kind == PlotKind::kCompare ? Algos::kAll : Algos::kOne;
  const Selection s = select_points(stored, o.db, o.filter, algos, command, calibrations);
  if (calibration_store && calibration_store->load_calibration(s.points.front().device).empty())
    throw usage_error(fmt::format("--calibration: '{}' holds no calibration of {} ({})", o.calibration,
                                  s.points.front().device.gpu_name, s.points.front().device.gpu_uuid));
  const std::string title = s.context.title();

  if (tilegrid)
    render(o, measured_tilegrid_plot(s, title), "tilegrid-" + o.shape, title);
  else
    render(o, figure(o.kind, s, command, !o.filter.algos.empty()), std::string(to_string(o.kind)), title);
  // After the figure, so that a refusal stays one line.
  if (!s.note.empty()) fmt::print(stderr, "plot: {}\n", s.note);
}

}  // namespace

std::string_view to_string(PlotKind kind) {
  switch (kind) {
    case PlotKind::kFlops: return "flops";
    case PlotKind::kRuntime: return "runtime";
    case PlotKind::kWaves: return "waves";
    case PlotKind::kKernels: return "kernels";
    case PlotKind::kCompare: return "compare";
    case PlotKind::kHeatmap: return "heatmap";
    case PlotKind::kTilegrid: return "tilegrid";
    case PlotKind::kRoofline: return "roofline";
  }
  return "";
}

void register_plot(CLI::App& app) {
  auto o = std::make_shared<PlotOptions>();
  auto* cmd = app.add_subcommand("plot", "Pictures of stored measurements: SVG (hover a point) and PNG, via gnuplot");
  cmd->footer(
      "KIND is one of:\n"
      "  flops      TFLOP/s by the swept size, coloured by the largest power of two dividing it\n"
      "  runtime    time by size; 'bigger and faster' points (a smaller size takes >10% longer) marked\n"
      "  waves      TFLOP/s with waves and wave efficiency below, and the sizes where a new wave starts\n"
      "  kernels    TFLOP/s coloured by the kernel (or family and tile) that ran\n"
      "  compare    backends and algorithms on one axis: cuBLAS, cuBLASLt h0, the best of h0..hK;\n"
      "             with several --db, the GPUs of those stores side by side (a line per GPU)\n"
      "  heatmap    TFLOP/s over a grid of two sizes (e.g. M x N at fixed K)\n"
      "  tilegrid SHAPE  one shape's output cut into tiles, coloured by wave; idle slots drawn\n"
      "  roofline   points against the compute and bandwidth roofs\n"
      "The shape options select as sweep plans: a dimension not given equals the first one given\n"
      "(--n 1..4096 is the squares), so a sweep's own options select its points again. The swept\n"
      "size is the dimension that varies; every other filter must leave one GPU (--gpu KEY: a model;\n"
      "--gpu-name TEXT: the name the store records), cuBLAS version, dtype and layout. With several\n"
      "backends or algorithms, cublas default is drawn (compare draws them all). Each figure writes\n"
      "OUT.svg, OUT.png, OUT.gp (the script: edit it and run `gnuplot NAME.gp` in its directory to\n"
      "restyle) and OUT.dat (the data it reads).\n"
      "Examples:\n"
      "  shapescope plot flops --db h200.db --n 1..4096 --out out/        # out/flops.svg, .png, .gp, .dat\n"
      "  shapescope plot runtime --out out/runtime-squares --n 1..4096\n"
      "  shapescope plot waves --m 4096 --k 4096 --n 1..8192:8\n"
      "  shapescope plot compare --n 64..4096:64 --backend cublas,cublaslt\n"
      "  shapescope plot compare --db h100.db --db h200.db --n 1..4096        # GPUs side by side\n"
      "  shapescope plot heatmap --m 256..8192:256 --n 256..8192:256 --k 4096\n"
      "  shapescope plot tilegrid 1793                                    # from the stored point\n"
      "  shapescope plot tilegrid 1793 --gpu a100 --tile 256x128          # from the model\n"
      "  shapescope plot roofline --calibration other.db                  # peaks measured elsewhere\n"
      "Exit codes: 0 ok, 1 gnuplot failed, 2 bad option or an empty or mixed selection, 5 result store\n"
      "unusable, 6 a figure could not be written, 7 gnuplot not installed (apt-get install gnuplot-nox).");
  auto kind = std::make_shared<std::string>();
  cmd->add_option("KIND", *kind, kinds_text())->required();
  cmd->add_option("SHAPE", o->shape, "tilegrid: N or MxNxK");
  add_db_option(cmd, o->dbs, o->db, "result store (SQLite file), opened read-only; compare: several, a line per GPU");
  add_out_option(cmd, o->out, "a folder, out/, or a path prefix, out/squares",
                 "a directory (existing, or ending in /: OUT/KIND.svg ...) or a path prefix (OUT.svg ...)");
  add_selection_options(cmd, o->filter);
  cmd->add_option("--calibration", o->calibration, "another store whose `info --calibrate` peaks of the same GPU to use");
  add_tile_option(cmd, o->tile, "tilegrid: BMxBN for a model prediction (with --gpu KEY)");
  cmd->add_flag("--force", o->force, kForceHelp);
  add_gnuplot_options(cmd, o->gnuplot, o->templates,
                      "directory of the KIND.gp templates (default: shapescope's plots/, see --version)");
  cmd->callback([o, kind] {
    o->kind = plot_kind_option(*kind);
    run_plot(*o);
  });
}

}  // namespace shapescope
