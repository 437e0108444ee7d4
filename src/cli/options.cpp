// The option groups and checks that several commands share, written once.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <sstream>

#include "backends/variants.hpp"
#include "cli/commands.hpp"
#include "common/error.hpp"
#include "core/backend_kind.hpp"
#include "model/explain.hpp"
#include "shape/plan.hpp"
#include "views/plot_select.hpp"

namespace shapescope {
namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) items.push_back(item);
  if (!text.empty() && text.back() == ',') items.push_back("");
  return items;
}

}  // namespace

std::vector<std::string> parse_backends(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& item : split_list(text)) {
    if (auto why = backend_name_error(item)) throw usage_error(*why);
    if (std::find(out.begin(), out.end(), item) != out.end())
      throw usage_error(fmt::format("--backend: '{}' is given twice in '{}'", item, text));
    out.push_back(item);
  }
  if (out.empty()) throw usage_error("--backend: '' is empty (cublas, cublaslt, custom)");
  return out;
}

void add_problem_options(CLI::App* cmd, ShapeOptions& shape) {
  cmd->add_option("--dtype", shape.dtype, "bf16 | fp16 | fp32 | tf32 | fp8 (e4m3, layout nt)");
  cmd->add_option("--layout", shape.layout, "nn (torch.mm(a, b)) | nt (x @ W.t()) | tn | tt; row-major, as PyTorch");
  cmd->add_option("--ld-pad", shape.ld_pad, "elements added to every leading dimension");
  cmd->add_option("--lda", shape.lda, "explicit leading dimension of A (elements)");
  cmd->add_option("--ldb", shape.ldb, "explicit leading dimension of B (elements)");
  cmd->add_option("--ldc", shape.ldc, "explicit leading dimension of C (elements)");
  cmd->add_option("--offset", shape.offset, "base-pointer offset of A and B in elements (the x[..., 1:] case)");
}

void check_samples(int samples) {
  if (samples < 1 || samples > 100000)
    throw usage_error(fmt::format("--samples: {} must be between 1 and 100000", samples));
}

void check_fp8_backend(DType dtype, const std::string& backend) {
  if (dtype == DType::kFp8 && backend == to_string(BackendKind::kCublas))
    throw usage_error("--backend: 'cublas' has no fp8 (cublasGemmEx); use --backend cublaslt");
}

ShapeArg parse_shape_option(const std::string& text) {
  const std::optional<ShapeArg> shape = parse_shape(text);
  if (!shape) throw usage_error(fmt::format("SHAPE: '{}' is not N or MxNxK with positive sizes (e.g. 1793, 4096x1x4096)", text));
  constexpr int64_t kMaxSize = std::numeric_limits<int32_t>::max();  // cuBLAS takes 32-bit sizes
  if (shape->m > kMaxSize || shape->n > kMaxSize || shape->k > kMaxSize)
    throw usage_error(fmt::format("SHAPE: '{}' has a size above {} (cuBLAS takes 32-bit sizes)", text, kMaxSize));
  return *shape;
}

void check_db_option(const std::string& db) {
  if (db.empty()) throw usage_error("--db: '' is empty (a store file, e.g. shapescope.db)");
}

void add_device_option(CLI::App* cmd, int& device) {
  // Taken as text so that "-1" or "x" gets a message of ours rather than CLI11's range dump.
  cmd->add_option_function<std::string>(
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
  cmd->add_option("--cublas", filter.cublas, "cuBLAS version starts with this");
  cmd->add_option("--dtype", filter.dtype, "bf16 | fp16 | fp32 | tf32 | fp8");
  cmd->add_option("--layout", filter.layout, "nn | nt | tn | tt");
  cmd->add_option("--backend", filter.backend, "comma list: cublas, cublaslt");
  cmd->add_option("--algo", filter.algo, "comma list: default (cublas), h0, h1, ... (cublaslt's heuristic order)");
  cmd->add_option("--kernel", filter.kernel, "main kernel's name contains this (case-insensitive)");
  cmd->add_option("--m", filter.m, "range of M, as sweep takes it (1..4096, 1..4096:8, 64..8192*2, lists)");
  cmd->add_option("--n", filter.n, "range of N");
  cmd->add_option("--k", filter.k, "range of K");
  cmd->add_option("--batch", filter.batch, "range of batch counts (default 1)");
  cmd->add_option("--ld-pad", filter.ld_pad, "points swept with this --ld-pad (default 0)");
  cmd->add_option("--offset", filter.offset, "points swept with this --offset (default 0)");
  cmd->add_flag("--hot", filter.hot, "points measured --hot (warm L2) instead of cold ones");
}

}  // namespace shapescope
