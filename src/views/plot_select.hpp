// Which stored points a plot shows: the filters of `shapescope plot`, the refusals when a selection
// mixes things one picture cannot (GPUs, library versions, dtypes, layouts), the default algorithm
// when several were timed, and which size is "the swept size" on the x axis. Pure C++.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/records.hpp"
#include "model/annotate.hpp"
#include "model/device_profile.hpp"

namespace shapescope {

class Store;

// A range option of a selection (--m, --n, --k, --batch), read once by the CLI: the sizes it selects,
// and its text as given, for messages only.
struct SizeFilter {
  std::string text;  // "1..4096:8"; "": not given
  std::vector<int64_t> values;  // as the range lists them
};
// `text` read as sweep reads a range (shape/range.hpp); Error(kUsage) naming `option` otherwise.
SizeFilter size_filter(const std::string& text, std::string_view option);

struct PlotFilter {
  const GpuProfile* gpu = nullptr;  // --gpu KEY: points measured on a GPU of this model (its profile)
  std::string gpu_name;         // --gpu-name TEXT: a substring of the GPU's name, case-insensitive ("H200")
  std::string cublas;           // a prefix of the cuBLAS version ("13.1")
  std::optional<DType> dtype;   // not given: any, but a selection that mixes them is refused
  std::optional<Layout> layout;
  // --backend's and --algo's comma lists, read by the CLI: names as the store's backend and algo
  // columns hold them (a name the store lacks is refused with what it holds); empty: any (see
  // select_points for several).
  std::vector<std::string> backends, algos;
  std::string kernel;           // a substring of the main kernel's short name
  // Ranges as `sweep` takes them; a dimension not given equals the first one given (square), so
  // the options that swept a set of points select it again. None given: every shape.
  SizeFilter m, n, k;
  SizeFilter batch{"1", {1}};
  int64_t ld_pad = 0;           // leading dimensions are the row length plus this (sweep --ld-pad)
  int64_t offset = 0;           // base-pointer offset of A and B (sweep --offset)
  bool hot = false;             // points measured with --hot instead of cold ones
  std::optional<ClockState> clocks;  // sustained, burst, unrecorded (older stores); not given: any

  // The filters the user gave, as options, for messages: "--dtype fp16 --n 1..64".
  std::string given() const;
};

// --backend and --algo of a selection, as the CLI reads them: "cublas,cublaslt" -> {"cublas", "cublaslt"};
// an empty item refused (Error(kUsage) naming `option`), an empty text no filter.
std::vector<std::string> comma_list_option(const std::string& text, std::string_view option);

// What the selected points have in common, for titles.
struct PlotContext {
  std::string gpu_name, driver, cuda_runtime, cublas;
  DType dtype = DType::kBf16;
  Layout layout = Layout::kNN;
  bool hot = false;
  std::string measured;         // "2026-11-21", or "2026-11-20..2026-11-21"
  int gpus = 1;                 // distinct GPUs (UUIDs) of that name the points came from
  std::string kernel;           // --kernel, when the points are those of some kernels only

  // "NVIDIA H200, bf16 nn, cuBLAS 13.1.0 (driver 580.159.04, CUDA 13.0), cold L2, measured 2026-11-21"
  // (and a second line "only the points whose kernel matches 'cutlass_75'" under --kernel)
  std::string title() const;
};

struct Selection {
  std::vector<StoredPoint> points;
  std::vector<Annotation> annotations;  // annotations[i] belongs to points[i]
  PlotContext context;
  std::string note;             // a default the selection took, for stderr; "" when none
};

// How many (backend, algorithm) pairs a plot shows.
enum class Algos {
  kOne,  // one: with several, cublas default is taken, or the only backend's default algorithm
  kAll,  // every one selected (compare)
};

// Whether a selection may mix GPUs, library versions, dtypes and layouts: one picture may not
// (kRefuse), a table of points may (kKeep: export).
enum class Mixes { kRefuse, kKeep };

// Filters, refuses mixes, removes re-measurements (the newest of identical keys stays) and
// annotates. `command` ("plot flops") starts the messages; `calibrations` supplies the peaks (the
// store itself, or --calibration). Throws Error(kUsage) with one line naming the option: a bad
// value, an empty selection, a mix to choose from.
Selection select_points(const std::vector<StoredPoint>& stored, const std::string& db_path,
                        const PlotFilter& filter, Algos algos, const std::string& command,
                        const Store& calibrations, Mixes mixes = Mixes::kRefuse);

// The size on the x axis: the dimension that varies in the selection.
struct SweptAxis {
  enum class Dim { kSquare, kM, kN, kK } dim = Dim::kN;
  std::string name;     // "n", "M", "N", "K"
  std::string label;    // "n (M = N = K = n) [elements]", "N (M = 4096, K = 4096) [elements]"
  int64_t of(const Problem& problem) const;
};
// Throws Error(kUsage) when more than one dimension varies independently (naming them).
SweptAxis swept_axis(const std::vector<StoredPoint>& points, const std::string& command);

// The two dimensions of a heatmap: y is the first of M, N, K that varies, x the second; the third
// must be fixed. Throws Error(kUsage) otherwise.
struct GridAxes {
  SweptAxis x, y;
  std::string fixed;    // "K = 4096"
};
GridAxes grid_axes(const std::vector<StoredPoint>& points, const std::string& command);

// "cublas default", "cublaslt h0".
std::string series_name(const PointKey& key);

}  // namespace shapescope
