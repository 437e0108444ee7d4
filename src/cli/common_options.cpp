// The options whose name means one thing in every command that takes it, each registered here once
// with its check and its help: --gpu, --out, --dtype, and the sizes --m, --n, --k and --batch.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "shape/range.hpp"
#include "views/plot_select.hpp"

namespace shapescope {

CLI::Option* add_gpu_option(CLI::App* cmd, const GpuProfile*& gpu, const std::string& help) {
  return cmd->add_option_function<std::string>(
      "--gpu",
      [cmd, &gpu](const std::string& text) {
        gpu = find_profile(text);
        if (gpu) return;
        // A GPU's name ("H100 80GB") goes to --gpu-name: said where the command takes it.
        const std::string by_name = cmd->get_option_no_throw("--gpu-name")
                                        ? fmt::format("; a GPU's name as the store records it: --gpu-name '{}'", text)
                                        : "";
        throw usage_error(fmt::format("--gpu: '{}' is not a known GPU profile ({}){}", text, profile_keys(), by_name));
      },
      help);
}

CLI::Option* add_out_option(CLI::App* cmd, std::string& out, const std::string& what, const std::string& help) {
  return cmd
      ->add_option_function<std::string>(
          "--out",
          [&out, what](const std::string& text) {
            if (text.empty()) throw usage_error(fmt::format("--out: '' is empty ({})", what));
            out = text;
          },
          help)
      ->default_str(out);
}

namespace {

// --dtype's check, one for every command; `take` keeps the value.
CLI::Option* add_checked_dtype(CLI::App* cmd, const std::function<void(const std::string&, DType)>& take,
                               const std::string& note) {
  return cmd->add_option_function<std::string>(
      "--dtype", [take](const std::string& text) { take(text, dtype_option(text)); },
      "bf16 | fp16 | fp32 | tf32 | fp8" + (note.empty() ? "" : " (" + note + ")"));
}

}  // namespace

CLI::Option* add_dtype_option(CLI::App* cmd, std::string& dtype, const std::string& note) {
  return add_checked_dtype(cmd, [&dtype](const std::string& text, DType) { dtype = text; }, note)->default_str(dtype);
}

CLI::Option* add_dtype_option(CLI::App* cmd, std::optional<DType>& dtype, const std::string& note) {
  return add_checked_dtype(cmd, [&dtype](const std::string&, DType typed) { dtype = typed; }, note);
}

CLI::Option* add_range_option(CLI::App* cmd, const std::string& name, std::string& range, const std::string& help) {
  return cmd->add_option_function<std::string>(
      name,
      [&range, name](const std::string& text) {
        // An empty value would read as "not given" to the planner: refused in parse_range's words.
        if (text.empty()) parse_range(text, name);
        range = text;
      },
      help);
}

CLI::Option* add_range_option(CLI::App* cmd, const std::string& name, SizeFilter& range, const std::string& help) {
  return cmd->add_option_function<std::string>(
      name, [&range, name](const std::string& text) { range = size_filter(text, name); }, help);
}

namespace {

// The four sizes, a plan's (text) or a selection's (SizeFilter): one list of names and help.
template <class Range>
void add_sizes(CLI::App* cmd, Range& m, Range& n, Range& k, Range& batch, const std::string& range,
               const std::string& batch_default) {
  add_range_option(cmd, "--m", m, "rows of A and C: " + range + " (4096, 1..4096, 1..4096:8, 64..8192*2, comma lists)");
  add_range_option(cmd, "--n", n, "columns of B and C: " + range);
  add_range_option(cmd, "--k", k, "inner dimension: " + range);
  add_range_option(cmd, "--batch", batch, "batch count of a strided batched GEMM: " + range)->default_str(batch_default);
}

}  // namespace

void add_dimension_options(CLI::App* cmd, std::string& m, std::string& n, std::string& k, std::string& batch) {
  add_sizes(cmd, m, n, k, batch, "a range", batch);
}

void add_dimension_options(CLI::App* cmd, SizeFilter& m, SizeFilter& n, SizeFilter& k, SizeFilter& batch) {
  add_sizes(cmd, m, n, k, batch, "a range, as sweep took it", batch.text);
}

}  // namespace shapescope
