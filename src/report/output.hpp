// Writing measured points out: a table for people (units in headers, a noise column), CSV and JSON
// for programs; and the progress line on stderr.
#pragma once
#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "model/annotate.hpp"
#include "model/annotation_fields.hpp"
#include "core/records.hpp"
#include "measure/measure.hpp"
#include "measure/progress.hpp"
#include "report/annotation_text.hpp"  // the table cells (tile_cell, waves_cell) the views share
#include "report/table.hpp"            // shorten_middle: how a kernel name is shortened

namespace shapescope {

enum class Format { kTable, kCsv, kJson };
std::optional<Format> parse_format(std::string_view text);
std::string_view to_string(Format format);  // "table", "csv", "json": as --format takes it

// How the table writes kernel names: shortened to kKernelCellWidth characters, the middle elided
// ("cutlass_75_tensorop_bf16_s16...256x128_nn_align1": the family, dtype, tile and alignment stay),
// or whole (--wide). CSV and JSON always carry the whole name.
enum class KernelNames { kShort, kWhole };
inline constexpr size_t kKernelCellWidth = 48;

// One row per point, in the order given, with its annotation (annotations[i] belongs to points[i]).
void write_points(std::ostream& out, Format format, const std::vector<StoredPoint>& points,
                  const std::vector<Annotation>& annotations, KernelNames names = KernelNames::kShort);

// One point as a JSON object: its fields, its annotation's and its kernels (what --format json writes).
std::string point_json(const StoredPoint& point, const Annotation& annotation);
// An annotation alone as a JSON object (a prediction has no point).
std::string annotation_json(const Annotation& annotation);
// How a sustained warm-up ended: "warm-up settled after 1.2 s at 1530 MHz, 690 W", "warm-up: the
// clock did not settle within 2 % in 5.0 s (1480 MHz, 700 W at its end)"; "" when not watched.
std::string settle_text(const SettleFacts& settle);

// --dry-run: the plan as a table on stdout, then on stderr its points, memory and rough GPU time
// (`where` names the GPU or says what was assumed), and the warnings of warn_if_absurd().
// `rule`: the samples per point (a fixed count, or the stopping rule whose minimum the estimate assumes).
// `predicted` (sweep --dry-run --predict): the table gives each point's predicted time instead
// (report/predicted_plan.hpp).
struct GpuPerfModel;
void write_dry_run(const std::vector<Problem>& problems, size_t backends, const PlanCost& cost,
                   const std::string& where, const StopRule& rule, const GpuPerfModel* predicted = nullptr);
// A plan far beyond what anyone means to run gets a warning on stderr with its numbers (a memory
// that does not fit is refused later, with exit 4, before anything is allocated).
void warn_if_absurd(const PlanCost& cost, const StopRule& rule);

// "[#####.....] 1234/4096 points  ETA 0:05  last 712.3 TFLOP/s", redrawn in place on stderr.
// Silent when disabled (stderr is not a terminal).
class Progress {
 public:
  Progress(size_t total, bool enabled);
  void update(double done_fraction, size_t points_done, double last_tflops);
  void finish();
  // measure()'s reports, drawn on this line.
  ProgressCallback callback();

 private:
  void draw(double now);

  size_t total_;
  bool enabled_;
  double start_;
  bool drawn_ = false;
  // Redraws are throttled; the latest update is kept so that finish() can draw what was skipped.
  double last_draw_ = 0;
  bool pending_ = false;
  double fraction_ = 0;
  size_t points_done_ = 0;
  double last_tflops_ = 0;
};

}  // namespace shapescope
