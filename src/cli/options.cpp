// The options several commands share, registered once each: the value is checked as CLI11 reads it.
#include <fmt/format.h>

#include <charconv>
#include <filesystem>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "model/explain.hpp"
#include "report/output.hpp"
#include "report/table.hpp"
#include "shape/plan.hpp"
#include "views/plot_select.hpp"

namespace shapescope {
namespace {

void check_db(const std::string& db) {
  if (db.empty()) throw usage_error("--db: '' is empty (a store file, e.g. shapescope.db)");
}

// `text` as a clock state; "unrecorded" (points measured before states were recorded) only where
// stored points are selected.
ClockState clock_state_option(const std::string& text, bool unrecorded) {
  const std::optional<ClockState> clocks = parse_clock_state(text);
  if (!clocks || (*clocks == ClockState::kUnrecorded && !unrecorded))
    throw usage_error(fmt::format("--clocks: '{}' is not a clock state (sustained, burst{})", text,
                                  unrecorded ? ", unrecorded" : ""));
  return *clocks;
}

// An integer option that must be within [low, high]: "--samples: 0 must be between 1 and 100000".
// --ld-pad or --offset of a selection: "--ld-pad: -1 must be >= 0"; above kMaxStrideOption, as a
// sweep refuses it ("--offset: 99999999999999 must be <= 2147483647 (elements)").
CLI::Option* add_non_negative_option(CLI::App* cmd, const std::string& name, int64_t& value, const std::string& help) {
  return cmd
      ->add_option_function<int64_t>(
          name,
          [&value, name](int64_t given) {
            if (given < 0) throw usage_error(fmt::format("{}: {} must be >= 0", name, given));
            if (given > kMaxStrideOption)
              throw usage_error(fmt::format("{}: {} must be <= {} (elements)", name, given, kMaxStrideOption));
            value = given;
          },
          help)
      ->default_str(std::to_string(value));
}

// --format's value: table, csv (where the command prints points) or json.
Format format_option(const std::string& text, bool csv) {
  const std::optional<Format> format = parse_format(text);
  if (!format || (*format == Format::kCsv && !csv))
    throw usage_error(fmt::format("--format: '{}' is not a format ({})", text, csv ? "table, csv, json" : "table, json"));
  return *format;
}

}  // namespace

CLI::Option* add_db_option(CLI::App* cmd, std::string& db, const std::string& help) {
  return cmd
      ->add_option_function<std::string>(
          "--db",
          [&db](const std::string& text) {
            check_db(text);
            db = text;
          },
          help)
      ->default_str(db);
}

CLI::Option* add_db_option(CLI::App* cmd, std::vector<std::string>& dbs, std::string& db, const std::string& help) {
  return cmd
      ->add_option_function<std::vector<std::string>>(
          "--db",
          [&dbs, &db](const std::vector<std::string>& given) {
            for (const std::string& text : given) check_db(text);
            check_given_once(given, "--db");  // one store twice is one GPU, not two
            dbs = given;
            db = given.front();
          },
          help)
      ->expected(1)
      ->allow_extra_args(false)
      ->take_all()
      ->default_str(db);
}

CLI::Option* add_clocks_option(CLI::App* cmd, ClockState& clocks) {
  return cmd
      ->add_option_function<std::string>(
          "--clocks", [&clocks](const std::string& text) { clocks = clock_state_option(text, false); },
          "sustained (passes back to back after a warm-up, at the power limit for large GEMMs) | burst (short "
          "bursts with idle cool-downs: boost clocks)")
      ->default_str(std::string(to_string(clocks)));
}

CLI::Option* add_clocks_option(CLI::App* cmd, std::optional<ClockState>& clocks) {
  return cmd->add_option_function<std::string>(
      "--clocks", [&clocks](const std::string& text) { clocks = clock_state_option(text, true); },
      "points measured in this clock state: sustained | burst | unrecorded (before states were recorded); "
      "default: any");
}

CLI::Option* add_samples_option(CLI::App* cmd, int& samples, const std::string& help) {
  CLI::Option* option = add_int_option(cmd, "--samples", samples, 1, 100000, help);
  return samples > 0 ? option : option->default_str("");
}

CLI::Option* add_pair_seconds_option(CLI::App* cmd, double& seconds, const std::string& what) {
  return cmd
      ->add_option_function<double>(
          "--pair-seconds",
          [&seconds](const double& given) {
            if (!(given >= 0 && given <= 60))
              throw usage_error(fmt::format("--pair-seconds: {} must be between 0 (no pairing) and 60", given));
            seconds = given;
          },
          fmt::format("measuring: {} in paired passes for at most this long per run (0: no pairing)", what))
      ->default_str(fmt::format("{}", seconds));
}

CLI::Option* add_lt_algos_option(CLI::App* cmd, int& lt_algos, const std::string& help) {
  return add_int_option(cmd, "--lt-algos", lt_algos, 1, 64, help);
}

void check_lt_algos_backend(int lt_algos, bool cublaslt) {
  if (lt_algos > 1 && !cublaslt) throw usage_error(fmt::format("--lt-algos: {} needs --backend cublaslt", lt_algos));
}

CLI::Option* add_tile_option(CLI::App* cmd, std::optional<std::pair<int, int>>& tile, const std::string& help) {
  return cmd->add_option_function<std::string>(
      "--tile",
      [&tile](const std::string& text) {
        tile = parse_tile(text);
        if (!tile) throw usage_error(fmt::format("--tile: '{}' is not BMxBN (e.g. 256x128, each 1..1024)", text));
      },
      help);
}

CLI::Option* add_format_options(CLI::App* cmd, Format& format, bool& wide, const std::string& help) {
  cmd->add_flag("--wide", wide,
                "table: every column, kernel names whole (otherwise fitted to $COLUMNS, or 120; CSV/JSON: always whole)");
  return cmd
      ->add_option_function<std::string>(
          "--format",
          [&format](const std::string& text) {
            format = format_option(text, true);
          },
          help)
      ->default_str(std::string(to_string(format)));
}

void check_wide(bool wide, Format format) {
  if (wide && format != Format::kTable)
    throw usage_error(fmt::format("--wide: only for --format table (--format {} carries kernel names whole)",
                                  to_string(format)));
  set_wide_tables(wide);
}

void add_result_format_options(CLI::App* cmd, bool& json, bool& wide) {
  CLI::Option* format =
      cmd->add_option_function<std::string>(
             "--format", [&json](const std::string& text) { json = format_option(text, false) == Format::kJson; },
             "table (the tables and sentences) | json (the same content as one JSON document)")
          ->default_str("table");
  cmd->add_flag("--json", json, "the same as --format json")->excludes(format);
  cmd->add_flag("--wide", wide, "the tables with every column and every name whole (otherwise fitted to $COLUMNS, "
                                "or 120)");
}

void check_wide_text(bool wide, bool json) {
  if (wide && json) throw usage_error("--wide: only for --format table (--format json carries every field whole)");
  set_wide_tables(wide);
}

void add_gnuplot_options(CLI::App* cmd, std::string& gnuplot, std::string& templates, const std::string& templates_help) {
  cmd->add_option("--gnuplot", gnuplot, "the gnuplot program (default: gnuplot on PATH)");
  cmd->add_option("--templates", templates, templates_help);
}

void check_templates(const std::string& templates, const std::vector<std::string>& kinds) {
  for (const std::string& kind : kinds)
    if (!std::filesystem::is_regular_file(std::filesystem::path(templates) / (kind + ".gp")))
      throw usage_error(fmt::format("--templates: '{}' has no {}.gp (the folder of plot templates: shapescope's "
                                    "plots/, or $SHAPESCOPE_DATA/plots)",
                                    templates, kind));
}

CLI::Option* add_device_option(CLI::App* cmd, int& device) {
  // Taken as text so that "-1" or "x" gets a message of ours rather than CLI11's range dump.
  return cmd->add_option_function<std::string>(
      "--device",
      [&device](const std::string& text) {
        int value = -1;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc() || end != text.data() + text.size() || value < 0)
          throw usage_error(fmt::format("--device: '{}' is not a CUDA device ordinal (0, 1, ...)", text));
        device = value;
      },
      "CUDA device ordinal")
      ->default_str(std::to_string(device));
}

void add_selection_options(CLI::App* cmd, PlotFilter& filter) {
  add_gpu_option(cmd, filter.gpu, "points measured on a GPU of this model: " + profile_keys());
  cmd->add_option_function<std::string>(
      "--gpu-name",
      [&filter](const std::string& text) {
        if (text.empty()) throw usage_error("--gpu-name: '' is empty (part of a GPU's name as the store records it)");
        filter.gpu_name = text;
      },
      "points measured on a GPU whose name (as the store records it) contains this, case-insensitive");
  cmd->add_option("--cublas", filter.cublas, "cuBLAS version starts with this");
  add_dtype_option(cmd, filter.dtype, "");
  cmd->add_option_function<std::string>(
      "--layout", [&filter](const std::string& text) { filter.layout = layout_option(text); }, "nn | nt | tn | tt");
  cmd->add_option_function<std::string>(
      "--backend", [&filter](const std::string& text) { filter.backends = comma_list_option(text, "--backend"); },
      "comma list: cublas, cublaslt");
  cmd->add_option_function<std::string>(
      "--algo", [&filter](const std::string& text) { filter.algos = comma_list_option(text, "--algo"); },
      "comma list: default (cublas), h0, h1, ... (cublaslt's heuristic order)");
  cmd->add_option("--kernel", filter.kernel, "main kernel's name contains this (case-insensitive)");
  add_dimension_options(cmd, filter.m, filter.n, filter.k, filter.batch);
  add_non_negative_option(cmd, "--ld-pad", filter.ld_pad, "points swept with this --ld-pad (default 0)");
  add_non_negative_option(cmd, "--offset", filter.offset, "points swept with this --offset (default 0)");
  cmd->add_flag("--hot", filter.hot, "points measured --hot (warm L2) instead of cold ones");
  add_clocks_option(cmd, filter.clocks);
}

}  // namespace shapescope
