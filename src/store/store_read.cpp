// The store's reading side: a point's key looked up, points and their kernels loaded, calibrations.
#include <sqlite3.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <unordered_map>
#include <vector>

#include "common/error.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store/store.hpp"

namespace shapescope {

using namespace sql;
using schema::kKernelColumns;

namespace {

bool parse_cc(const std::string& text, int& major, int& minor) {
  size_t dot = text.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == text.size()) return false;
  char* end = nullptr;
  long parsed_major = std::strtol(text.c_str(), &end, 10);
  if (end != text.c_str() + dot) return false;
  long parsed_minor = std::strtol(text.c_str() + dot + 1, &end, 10);
  if (*end != '\0') return false;
  major = int(parsed_major);
  minor = int(parsed_minor);
  return true;
}

// The stopping rule's and the sentinel's columns (schema 2; a schema 1 table reads their legacy
// values), from column `c` on; advances `c` past them.
void read_stopping(const Statement& row, int& c, int64_t id, const std::string& path, TimingStats& t) {
  const std::string stop = row.text(c++);
  const std::optional<StopReason> reason = parse_stop_reason(stop);
  if (!reason) fail(path, fmt::format("corrupt (point {} has stop reason '{}')", id, stop));
  t.stop = *reason;
  if (!row.is_null(c)) t.median_ci = row.real(c);
  c++;
  if (!row.is_null(c)) t.sentinel_drift = row.real(c);
  c++;
  t.reruns = row.int32(c++);
  t.drifted = row.int64(c++) != 0;
}

// The key's columns (backend .. clock_state), from column `c` on; advances `c` past them.
void read_key(const Statement& row, int& c, int64_t id, const std::string& path, PointKey& key) {
  const std::string backend = row.text(c++);
  const std::optional<BackendKind> kind = parse_backend_kind(backend);
  if (!kind) fail(path, fmt::format("point {} has backend '{}', which this build does not know", id, backend));
  key.backend = *kind;
  key.algo = row.text(c++);
  std::string dtype = row.text(c++);
  std::string layout = row.text(c++);
  std::optional<DType> parsed_dtype = parse_dtype(dtype);
  if (!parsed_dtype) fail(path, fmt::format("corrupt (point {} has dtype '{}')", id, dtype));
  std::optional<Layout> parsed_layout = parse_layout(layout);
  if (!parsed_layout) fail(path, fmt::format("corrupt (point {} has layout '{}')", id, layout));
  Problem& p = key.problem;
  p.dtype = *parsed_dtype;
  p.layout = *parsed_layout;
  for (int64_t* field : {&p.m, &p.n, &p.k, &p.batch, &p.lda, &p.ldb, &p.ldc, &p.off_a, &p.off_b, &p.off_c}) {
    *field = row.int64(c++);
  }
  const std::string groups = row.text(c++);
  const std::optional<std::vector<GroupShape>> parsed_groups = parse_groups(groups);
  if (!parsed_groups) fail(path, fmt::format("corrupt (point {} has groups '{}')", id, groups.substr(0, 60)));
  p.groups = *parsed_groups;
  std::string mode = row.text(c++);
  if (mode != "hot" && mode != "cold") {
    fail(path, fmt::format("corrupt (point {} has mode '{}')", id, mode));
  }
  key.hot = mode == "hot";
  const std::string clocks = row.text(c++);
  const std::optional<ClockState> state = parse_clock_state(clocks);
  if (!state) fail(path, fmt::format("corrupt (point {} has clock state '{}')", id, clocks));
  key.clocks = *state;
  const std::string recipe = row.text(c++);
  const std::optional<Fp8Recipe> parsed_recipe = recipe.empty() ? std::optional<Fp8Recipe>(Fp8Recipe{}) : parse_recipe(recipe);
  if (!parsed_recipe || recipe.empty() != (p.dtype != DType::kFp8))
    fail(path, fmt::format("corrupt (point {} of dtype {} has recipe '{}')", id, dtype, recipe.substr(0, 40)));
  p.recipe = *parsed_recipe;
  const std::string cast = row.text(c++);
  const std::optional<CastOperand> operand = parse_cast_operand(cast);
  if (!operand) fail(path, fmt::format("corrupt (point {} has cast operand '{}')", id, cast.substr(0, 40)));
  p.cast = *operand;
}

// cuBLASLt's config (15 columns from `c`; lt_algo_id is NULL exactly when the point has none);
// advances `c` past them.
std::optional<LtAlgoConfig> read_lt(const Statement& row, int& c) {
  if (row.is_null(c)) {
    c += 15;
    return std::nullopt;
  }
  LtAlgoConfig lt;
  lt.algo_id = row.int32(c++);
  lt.tile_id = row.int32(c++);
  lt.tile = row.text(c++);
  lt.tile_size = lt_tile_size(lt.tile);
  lt.stages_id = row.int32(c++);
  lt.stages = row.text(c++);
  lt.splitk = row.int32(c++);
  lt.reduction_scheme = row.int32(c++);
  lt.reduction = row.text(c++);
  lt.swizzle = row.int32(c++);
  lt.custom_option = row.int32(c++);
  lt.cluster_shape_id = row.int32(c++);
  lt.cluster = row.text(c++);
  lt.inner_shape_id = row.int32(c++);
  lt.waves_count = float(row.real(c++));
  lt.workspace_bytes = row.int64(c++);
  return lt;
}

StoredPoint read_point(const Statement& row, const std::string& path) {
  StoredPoint point;
  int c = 0;
  point.id = row.int64(c++);
  DeviceContext& device = point.device;
  // Names are printed to terminals and pages: a store written by another program (or edited) may
  // hold escape sequences in them, which are read as text (common/error.hpp's one_line).
  device.gpu_name = one_line(row.text(c++));
  device.gpu_uuid = row.text(c++);
  device.sm_count = row.int32(c++);
  std::string cc = row.text(c++);
  if (!parse_cc(cc, device.cc_major, device.cc_minor)) {
    fail(path, fmt::format("corrupt (point {} has compute capability '{}')", point.id, cc));
  }
  device.driver = one_line(row.text(c++));
  device.cuda_runtime = one_line(row.text(c++));
  device.cublas = one_line(row.text(c++));
  device.cublaslt = one_line(row.text(c++));

  read_key(row, c, point.id, path, point.key);

  TimingStats& t = point.result.timing;
  t.median_us = row.real(c++);
  t.min_us = row.real(c++);
  t.max_us = row.real(c++);
  t.q1_us = row.real(c++);
  t.q3_us = row.real(c++);
  t.samples = row.int32(c++);
  t.noise = row.real(c++);
  t.noisy = row.int64(c++) != 0;
  if (!row.is_null(c)) t.sm_clock_mhz = row.real(c);
  c++;
  // Stored as the signed 64-bit integer SQLite holds; the bits come back unchanged.
  t.throttle_reasons = static_cast<uint64_t>(row.int64(c++));
  t.throttled = row.int64(c++) != 0;
  read_stopping(row, c, point.id, path, t);

  point.result.lt = read_lt(row, c);
  point.result.measured_at = one_line(row.text(c++));
  point.result.command = one_line(row.text(c++));
  point.annotated = row.int64(c++) != 0;
  return point;
}

// A point whose times are not positive numbers (zero, negative, NaN: shapescope never writes one)
// would be drawn as 0 TFLOP/s or break a figure's axis: named instead, by id and shape.
std::optional<std::string> bad_times(const StoredPoint& p) {
  const TimingStats& t = p.result.timing;
  for (const auto& [name, value] : {std::pair{"median", t.median_us}, std::pair{"min", t.min_us},
                                    std::pair{"max", t.max_us}, std::pair{"q1", t.q1_us}, std::pair{"q3", t.q3_us}})
    if (!(value > 0) || !std::isfinite(value))
      return fmt::format("id {} ({} {} {}: {} {} us)", p.id, p.key.problem.shape_string(), to_string(p.key.problem.dtype),
                         to_string(p.key.problem.layout), name, value);
  return std::nullopt;
}

// Fails naming every point of `points` that bad_times() finds (the first few, and how many in all).
void refuse_bad_times(const std::vector<StoredPoint>& points, const std::string& path) {
  std::vector<std::string> bad;
  for (const StoredPoint& p : points)
    if (std::optional<std::string> why = bad_times(p)) bad.push_back(std::move(*why));
  if (bad.empty()) return;
  constexpr size_t kNamed = 5;
  std::string named;
  for (size_t i = 0; i < std::min(bad.size(), kNamed); ++i) named += (i ? ", " : "") + bad[i];
  fail(path, fmt::format("corrupt: {} point{} with a time that is not a positive number: {}{}", bad.size(),
                         bad.size() == 1 ? "" : "s", named,
                         bad.size() > kNamed ? fmt::format(" and {} more", bad.size() - kNamed) : ""));
}

// Reads a kernels row (kKernelColumns order) into a record; column 0 (point_id) and 1 (seq) are the
// caller's.
KernelRecord read_kernel(const Statement& row) {
  KernelRecord kernel;
  int c = 2;
  kernel.name = one_line(row.text(c++));
  for (uint32_t* field : {&kernel.grid_x, &kernel.grid_y, &kernel.grid_z, &kernel.block_x, &kernel.block_y,
                          &kernel.block_z, &kernel.cluster_x, &kernel.cluster_y, &kernel.cluster_z}) {
    *field = static_cast<uint32_t>(row.int64(c++));
  }
  kernel.registers = row.int32(c++);
  kernel.static_smem = row.int64(c++);
  kernel.dynamic_smem = row.int64(c++);
  kernel.duration_us = row.real(c++);
  return kernel;
}

}  // namespace

std::vector<std::optional<StoredRef>> Store::find(const DeviceContext& device, const std::vector<PointKey>& keys) const {
  std::vector<std::optional<StoredRef>> found(keys.size());
  if (reader() == nullptr) return found;  // not created yet: nothing stored
  Statement stmt(db_, path_, "SELECT id, annotated FROM points WHERE " + schema::key_where_clause(version_));
  for (size_t i = 0; i < keys.size(); ++i) {
    stmt.reset();
    schema::bind_key(stmt, 1, device, keys[i]);
    if (stmt.step()) found[i] = StoredRef{stmt.int64(0), stmt.int64(1) != 0};
  }
  return found;
}

std::optional<int64_t> Store::find(const DeviceContext& device, const PointKey& key) const {
  const std::optional<StoredRef> found = find(device, std::vector<PointKey>{key}).front();
  if (!found) return std::nullopt;
  return found->id;
}

bool Store::is_annotated(int64_t id) const {
  if (reader() == nullptr) return false;
  Statement stmt(db_, path_, "SELECT annotated FROM points WHERE id = ?");
  stmt.bind(1, id);
  return stmt.step() && stmt.int64(0) != 0;
}

std::optional<StoredPoint> Store::load(int64_t id) const {
  std::vector<StoredPoint> points = load(std::vector<int64_t>{id});
  if (points.empty()) return std::nullopt;
  return std::move(points.front());
}

std::vector<StoredPoint> Store::load(const std::vector<int64_t>& ids) const {
  std::vector<StoredPoint> points;
  if (reader() == nullptr) return points;
  Statement stmt(db_, path_, fmt::format("SELECT {} FROM points WHERE id = ?", schema::select_list(version_)));
  Statement kernels(db_, path_, fmt::format("SELECT {} FROM kernels WHERE point_id = ? ORDER BY seq", kKernelColumns));
  for (int64_t id : ids) {
    stmt.reset();
    stmt.bind(1, id);
    if (!stmt.step()) continue;
    points.push_back(read_point(stmt, path_));
    kernels.reset();
    kernels.bind(1, id);
    while (kernels.step()) points.back().kernels.push_back(read_kernel(kernels));
  }
  refuse_bad_times(points, path_);
  return points;
}

std::vector<StoredPoint> Store::load_all() const {
  std::vector<StoredPoint> points;
  if (reader() == nullptr) return points;
  std::unordered_map<int64_t, size_t> index_of;
  {
    Statement stmt(db_, path_, fmt::format("SELECT {} FROM points ORDER BY id", schema::select_list(version_)));
    while (stmt.step()) {
      points.push_back(read_point(stmt, path_));
      index_of[points.back().id] = points.size() - 1;
    }
  }
  refuse_bad_times(points, path_);
  // One pass over all kernels rather than a query per point.
  Statement kernels(db_, path_, fmt::format("SELECT {} FROM kernels ORDER BY point_id, seq", kKernelColumns));
  while (kernels.step()) {
    auto found = index_of.find(kernels.int64(0));
    if (found != index_of.end()) points[found->second].kernels.push_back(read_kernel(kernels));
  }
  return points;
}

std::vector<Calibration> Store::load_calibration(const DeviceContext& device) const {
  if (reader() == nullptr) return {};
  // Newest by measured_at (ISO 8601 sorts as text); of two in the same second, the later insert.
  Statement stmt(db_, path_,
                 "SELECT what, value, measured_at, detail FROM calibration AS c WHERE gpu_uuid = ?1 AND id = "
                 "(SELECT id FROM calibration WHERE gpu_uuid = ?1 AND what = c.what "
                 "ORDER BY measured_at DESC, id DESC LIMIT 1) ORDER BY what");
  stmt.bind(1, device.gpu_uuid);
  std::vector<Calibration> calibrations;
  while (stmt.step()) {
    Calibration calibration;
    calibration.what = stmt.text(0);
    calibration.value = stmt.real(1);
    calibration.measured_at = stmt.text(2);
    calibration.detail = stmt.text(3);
    calibrations.push_back(calibration);
  }
  return calibrations;
}


}  // namespace shapescope
