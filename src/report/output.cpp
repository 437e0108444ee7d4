#include "report/output.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/units.hpp"
#include "report/json_schema.hpp"
#include "report/predicted_plan.hpp"
#include "report/table.hpp"

namespace shapescope {

namespace {

constexpr double kRedrawIntervalS = 0.1;
constexpr int kBarWidth = 20;

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// TFLOP/s of a point; nullopt when the median is not a usable time.
std::optional<double> tflops_of(const StoredPoint& point) {
  double median_us = point.result.timing.median_us;
  if (!(median_us > 0) || !std::isfinite(median_us)) return std::nullopt;
  return point.key.problem.flops() / median_us / 1e6;
}

// One table cell per line: a control character (a newline in an algo name) would break the row.
std::string table_cell(std::string text) {
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return text;
}

std::string kernel_cell(const StoredPoint& point, KernelNames names) {
  if (!point.annotated || point.kernels.empty()) return "-";
  std::string cell = short_kernel_name(point.kernels.front().name);
  if (cell.empty()) cell = "?";  // CUPTI gave no name
  if (names == KernelNames::kShort) cell = shorten_middle(cell, kKernelCellWidth);
  if (point.kernels.size() > 1) cell += fmt::format(" +{}", point.kernels.size() - 1);
  return cell;
}

// Shortest text that reads back as the same double; JSON and CSV have no inf or nan, so those are empty.
std::string number(double value) {
  if (!std::isfinite(value)) return {};
  return fmt::format("{}", value);
}

void write_points_table(std::ostream& out, const std::vector<StoredPoint>& points,
                        const std::vector<Annotation>& annotations, KernelNames names) {
  struct Column {
    const char* header;
    bool right;  // numbers are right-aligned so that their digits line up
  };
  const std::vector<Column> columns = {
      {"backend", false},    {"algo", false},     {"dtype", false},     {"layout", false},
      {"M", true},           {"N", true},         {"K", true},          {"batch", true},
      {"median [us]", true}, {"min [us]", true},  {"noise [%]", true},  {"n", true},
      {"TFLOP/s", true},     {"peak [%]", true},  {"clock [MHz]", true}, {"flags", false},
      {"align M/N/K", true}, {"16B", false},      {"tile", true},       {"tiles", true},
      {"waves", true},       {"w.eff [%]", true}, {"kernel", false}};

  std::vector<std::vector<std::string>> rows;
  rows.reserve(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    const StoredPoint& point = points[i];
    const Annotation& a = annotations[i];
    const Problem& p = point.key.problem;
    const TimingStats& t = point.result.timing;
    std::optional<double> tflops = tflops_of(point);
    std::string flags;
    if (t.noisy) flags += 'N';
    if (t.throttled) flags += 'T';
    if (t.stop == StopReason::kCap) flags += 'C';
    if (t.drifted) flags += 'D';
    if (flags.empty()) flags = "-";
    rows.push_back({table_cell(std::string(to_string(point.key.backend))), table_cell(point.key.algo), std::string(to_string(p.dtype)),
                    std::string(to_string(p.layout)), fmt::format("{}", p.m), fmt::format("{}", p.n),
                    fmt::format("{}", p.k), fmt::format("{}", p.batch), fixed(t.median_us, 2), fixed(t.min_us, 2),
                    fixed(t.noise * 100, 1), fmt::format("{}", t.samples), tflops ? fixed(*tflops, 1) : "-",
                    a.roofline.pct_peak ? fixed(*a.roofline.pct_peak * 100, 1) : "-",
                    t.sm_clock_mhz ? fixed(*t.sm_clock_mhz, 0) : "-", flags, align_cell(a), rule_cell(a),
                    tile_cell(a), grid_cell(a), waves_cell(a),
                    a.waves.slots > 0 && a.waves.work > 0 ? fixed(a.waves.efficiency * 100, 0) : "-",
                    table_cell(kernel_cell(point, names))});
  }

  std::vector<std::string> header;
  std::vector<bool> right;
  for (const Column& column : columns) {
    header.push_back(column.header);
    right.push_back(column.right);
  }
  // The kernel name is shortened first; then the columns go in this order, the least read first.
  const std::vector<ColumnFit> fit = fit_by_name(
      header, {{"kernel", {0, 24}},  {"clock [MHz]", {1}}, {"min [us]", {2}},  {"n", {3}},        {"batch", {4}},
               {"w.eff [%]", {5}},   {"dtype", {6}},       {"layout", {7}},    {"align M/N/K", {8}}, {"tiles", {9}},
               {"flags", {10}},      {"peak [%]", {11}},   {"noise [%]", {12}}, {"algo", {13}},     {"tile", {14}},
               {"waves", {15}},      {"16B", {16}}});
  rows.insert(rows.begin(), std::move(header));
  write_table(out, rows, right, "", fit);
}

std::string csv_field(const std::string& value) {
  if (value.find_first_of(",\"\n\r") == std::string::npos) return value;
  std::string quoted = "\"";
  for (char c : value) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

using Json = nlohmann::ordered_json;

// nlohmann's text of a scalar; bytes that are not UTF-8 become U+FFFD (dump() would throw on them).
std::string dump_scalar(const Json& value) { return value.dump(-1, ' ', false, Json::error_handler_t::replace); }

// A real number, or null where it is absent or not finite (JSON has no inf or nan).
Json real(std::optional<double> value) {
  return value && std::isfinite(*value) ? Json(*value) : Json(nullptr);
}

Json field_json(const FieldValue& value) {
  if (const auto* integer = std::get_if<int64_t>(&value)) return *integer;
  if (const auto* number = std::get_if<double>(&value)) return real(*number);
  if (const auto* text = std::get_if<std::string>(&value)) return *text;
  return nullptr;
}

// The points' JSON has always been one object per line, "key": value with ", " between members, and
// numbers in their shortest form ("12", not dump()'s "12.0"): nlohmann holds the values and escapes
// the strings, this lays them out.
void write_one_line(std::string& out, const Json& value) {
  if (value.is_object() || value.is_array()) {
    out += value.is_object() ? '{' : '[';
    bool first = true;
    for (auto member = value.begin(); member != value.end(); ++member) {
      if (!first) out += ", ";
      first = false;
      if (value.is_object()) out += dump_scalar(member.key()) + ": ";
      write_one_line(out, member.value());
    }
    out += value.is_object() ? '}' : ']';
  } else if (value.is_number_float()) {
    out += number(value.get<double>());
  } else {
    out += dump_scalar(value);
  }
}

std::string one_line(const Json& value) {
  std::string text;
  write_one_line(text, value);
  return text;
}

// A scalar as a CSV cell: strings as they are, absent values empty, booleans 0/1.
std::string csv_text(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "1" : "0";
  if (value.is_number_float()) return number(value.get<double>());
  if (value.is_null()) return {};
  return value.dump();
}

// cuBLASLt's algorithm config; every field null for a point of another backend.
Json lt_fields(const std::optional<LtAlgoConfig>& lt) {
  const LtAlgoConfig c = lt.value_or(LtAlgoConfig{});
  Json j;
  j["lt_algo_id"] = c.algo_id;
  j["lt_tile_id"] = c.tile_id;
  j["lt_tile"] = c.tile;
  j["lt_stages_id"] = c.stages_id;
  j["lt_stages"] = c.stages;
  j["lt_splitk"] = c.splitk;
  j["lt_reduction_scheme"] = c.reduction_scheme;
  j["lt_reduction"] = c.reduction;
  j["lt_swizzle"] = c.swizzle;
  j["lt_custom_option"] = c.custom_option;
  j["lt_cluster_shape_id"] = c.cluster_shape_id;
  j["lt_cluster"] = c.cluster;
  j["lt_inner_shape_id"] = c.inner_shape_id;
  j["lt_waves_count"] = real(double(c.waves_count));
  j["lt_workspace_bytes"] = c.workspace_bytes;
  if (!lt) {
    for (auto field = j.begin(); field != j.end(); ++field) *field = nullptr;
  }
  return j;
}

// Every scalar field of a point, in output order (CSV columns, JSON keys); the kernels are added by
// each format in its own shape.
Json point_fields(const StoredPoint& point) {
  const Problem& p = point.key.problem;
  const DeviceContext& d = point.device;
  const TimingStats& t = point.result.timing;
  Json j;
  j["id"] = point.id;
  j["backend"] = to_string(point.key.backend);
  j["algo"] = point.key.algo;
  j["dtype"] = to_string(p.dtype);
  j["layout"] = to_string(p.layout);
  j["m"] = p.m;
  j["n"] = p.n;
  j["k"] = p.k;
  j["batch"] = p.batch;
  j["lda"] = p.lda;
  j["ldb"] = p.ldb;
  j["ldc"] = p.ldc;
  j["off_a"] = p.off_a;
  j["off_b"] = p.off_b;
  j["off_c"] = p.off_c;
  j["mode"] = point.key.hot ? "hot" : "cold";
  j["clocks"] = to_string(point.key.clocks);
  j["recipe"] = p.dtype == DType::kFp8 ? recipe_text(p.recipe) : std::string();  // fp8's scaling; "" otherwise
  j["cast"] = std::string(to_string(p.cast));  // a cast point's operand ("a", "b"); "" for a GEMM
  j["gpu_name"] = d.gpu_name;
  j["gpu_uuid"] = d.gpu_uuid;
  j["driver"] = d.driver;
  j["cuda_runtime"] = d.cuda_runtime;
  j["cublas"] = d.cublas;
  j["cublaslt"] = d.cublaslt;
  j["median_us"] = real(t.median_us);
  j["min_us"] = real(t.min_us);
  j["max_us"] = real(t.max_us);
  j["q1_us"] = real(t.q1_us);
  j["q3_us"] = real(t.q3_us);
  j["samples"] = t.samples;
  j["noise"] = real(t.noise);
  j["noisy"] = t.noisy;
  j["sm_clock_mhz"] = real(t.sm_clock_mhz);
  j["throttle_reasons"] = t.throttle_reasons;
  j["throttled"] = t.throttled;
  j["stop"] = to_string(t.stop);
  j["median_ci"] = real(t.median_ci);
  j["sentinel_drift"] = real(t.sentinel_drift);
  j["reruns"] = t.reruns;
  j["drifted"] = t.drifted;
  j["tflops"] = real(tflops_of(point));
  j.update(lt_fields(point.result.lt));
  j["measured_at"] = point.result.measured_at;
  j["command"] = point.result.command;
  j["annotated"] = point.annotated;
  return j;
}

Json annotation_object(const Annotation& annotation) {
  Json j = Json::object();
  for (const AnnotationField& field : annotation_fields(annotation)) j[field.name] = field_json(field.value);
  return j;
}

// A point's fields followed by its annotation's.
Json all_fields(const StoredPoint& point, const Annotation& annotation) {
  Json j = point_fields(point);
  j.update(annotation_object(annotation));
  return j;
}

void write_csv(std::ostream& out, const std::vector<StoredPoint>& points,
               const std::vector<Annotation>& annotations) {
  // The header comes from the fields of a default point, so it cannot drift from the rows.
  const Json names = all_fields(StoredPoint{}, Annotation{});
  std::string header;
  for (auto field = names.begin(); field != names.end(); ++field) header += field.key() + ",";
  out << header << "kernels,kernel_grids\n";
  for (size_t p = 0; p < points.size(); ++p) {
    const StoredPoint& point = points[p];
    std::string line;
    for (const Json& field : all_fields(point, annotations[p])) line += csv_field(csv_text(field)) + ",";
    std::string names, grids;
    for (size_t i = 0; i < point.kernels.size(); ++i) {
      const KernelRecord& kernel = point.kernels[i];
      if (i > 0) {
        names += ';';
        grids += ';';
      }
      names += kernel.name;
      grids += fmt::format("{}x{}x{}", kernel.grid_x, kernel.grid_y, kernel.grid_z);
    }
    out << line << csv_field(names) << ',' << csv_field(grids) << '\n';
  }
}

Json kernel_object(const KernelRecord& kernel) {
  Json j;
  j["name"] = kernel.name;
  j["grid_x"] = kernel.grid_x;
  j["grid_y"] = kernel.grid_y;
  j["grid_z"] = kernel.grid_z;
  j["block_x"] = kernel.block_x;
  j["block_y"] = kernel.block_y;
  j["block_z"] = kernel.block_z;
  j["cluster_x"] = kernel.cluster_x;
  j["cluster_y"] = kernel.cluster_y;
  j["cluster_z"] = kernel.cluster_z;
  j["registers"] = kernel.registers;
  j["static_smem"] = kernel.static_smem;
  j["dynamic_smem"] = kernel.dynamic_smem;
  j["duration_us"] = real(kernel.duration_us);
  return j;
}

Json point_object(const StoredPoint& point, const Annotation& annotation) {
  Json j = all_fields(point, annotation);
  j["kernels"] = Json::array();
  for (const KernelRecord& kernel : point.kernels) j["kernels"].push_back(kernel_object(kernel));
  return j;
}

// One object per line: readable, and line-oriented tools can still split it.
void write_json(std::ostream& out, const std::vector<StoredPoint>& points,
                const std::vector<Annotation>& annotations) {
  out << "[";
  for (size_t i = 0; i < points.size(); ++i) out << (i > 0 ? ",\n  " : "\n  ") << point_json(points[i], annotations[i]);
  out << (points.empty() ? "]\n" : "\n]\n");
}

std::string format_duration(double seconds) {
  int64_t total = int64_t(std::llround(std::max(seconds, 0.0)));
  int64_t hours = total / 3600, minutes = total / 60 % 60, secs = total % 60;
  if (hours > 0) return fmt::format("{}:{:02}:{:02}", hours, minutes, secs);
  return fmt::format("{}:{:02}", minutes, secs);
}

}  // namespace

std::optional<Format> parse_format(std::string_view text) {
  for (Format format : {Format::kTable, Format::kCsv, Format::kJson})
    if (text == to_string(format)) return format;
  return std::nullopt;
}

std::string_view to_string(Format format) {
  switch (format) {
    case Format::kTable: return "table";
    case Format::kCsv: return "csv";
    case Format::kJson: return "json";
  }
  return "";
}

std::string point_json(const StoredPoint& point, const Annotation& annotation) {
  const Json j = point_object(point, annotation);
  warn_unless_json_fits(j, "Point");
  return one_line(j);
}

std::string annotation_json(const Annotation& annotation) {
  const Json j = annotation_object(annotation);
  warn_unless_json_fits(j, "Point");
  return one_line(j);
}

void write_points(std::ostream& out, Format format, const std::vector<StoredPoint>& points,
                  const std::vector<Annotation>& annotations, KernelNames names) {
  if (annotations.size() != points.size())
    throw Error(ExitCode::kInternal, fmt::format("write_points: {} points but {} annotations", points.size(),
                                                 annotations.size()));
  switch (format) {
    case Format::kTable: write_points_table(out, points, annotations, names); return;
    case Format::kCsv: write_csv(out, points, annotations); return;
    case Format::kJson: write_json(out, points, annotations); return;
  }
}

void write_dry_run(const std::vector<Problem>& problems, size_t backends, const PlanCost& cost,
                   const std::string& where, const StopRule& rule, const GpuPerfModel* predicted) {
  std::vector<std::vector<std::string>> rows = {{"M", "N", "K", "batch", "lda", "ldb", "ldc", "offset", "est. [us]"}};
  for (const auto& p : problems) {
    if (predicted) break;
    std::vector<std::string> row;
    for (int64_t value : {p.m, p.n, p.k, p.batch, p.lda, p.ldb, p.ldc, p.off_a}) row.push_back(std::to_string(value));
    row.push_back(fmt::format("{:.1f}", estimate_us(p)));
    rows.push_back(std::move(row));
  }
  if (predicted) write_predicted_plan(std::cout, problems, *predicted);
  else write_table(std::cout, rows, std::vector<bool>(rows.front().size(), true));
  const MemoryPlan& mem = cost.memory;
  fmt::print(stderr, "{} problems x {} backend(s) = {} points; {}\n", problems.size(), backends, cost.points,
             where);
  fmt::print(stderr, "GPU memory needed: {} (A {}, B {}, C {}, flush {}, workspace {})\n", gib(double(mem.total()), 2),
             mib(double(mem.a), 1), mib(double(mem.b), 1), mib(double(mem.c), 1), mib(double(mem.flush), 1),
             mib(double(mem.workspace), 1));
  fmt::print(stderr,
             "estimated GPU time: {:.1f} s for {} samples per point{} (a rough model; points already "
             "in the store are skipped)\n",
             cost.seconds, rule.min_samples, rule.fixed() ? "" : ", the stopping rule's minimum");
  warn_if_absurd(cost, rule);
}

void warn_if_absurd(const PlanCost& cost, const StopRule& rule) {
  const int samples = rule.min_samples;
  constexpr double kLongSeconds = 3600;
  constexpr int64_t kLargestGpuBytes = 192ll << 30;  // B200; no GPU shapescope knows has more
  if (cost.seconds > kLongSeconds)
    fmt::print(stderr,
               "warning: this plan is estimated at {:.1f} hours of GPU time ({} points x {} samples); ^C keeps what "
               "is measured, and --dry-run lists the plan\n",
               cost.seconds / 3600, cost.points, samples);
  if (cost.memory.total() > kLargestGpuBytes)
    fmt::print(stderr, "warning: this plan needs {} of GPU memory, more than any GPU has (192 GiB)\n",
               gib(double(cost.memory.total()), 1));
}

Progress::Progress(size_t total, bool enabled) : total_(total), enabled_(enabled), start_(now_seconds()) {}

void Progress::update(double done_fraction, size_t points_done, double last_tflops) {
  if (!enabled_) return;
  fraction_ = std::clamp(done_fraction, 0.0, 1.0);
  points_done_ = points_done;
  last_tflops_ = last_tflops;
  pending_ = true;
  double now = now_seconds();
  // Redrawing on every point would flood a slow terminal in sweeps of tiny shapes.
  if (drawn_ && now - last_draw_ < kRedrawIntervalS) return;
  draw(now);
}

ProgressCallback Progress::callback() {
  return [this](const MeasureProgress& p) {
    if (p.finished) {
      finish();
    } else {
      update(p.fraction, p.measured, p.last_tflops);
    }
  };
}

void Progress::finish() {
  if (!enabled_) return;
  if (pending_) draw(now_seconds());
  if (drawn_) {
    std::fputc('\n', stderr);
    std::fflush(stderr);
  }
  // A second finish() must not print another newline.
  drawn_ = false;
}

void Progress::draw(double now) {
  int filled = int(fraction_ * kBarWidth);
  std::string bar = std::string(size_t(filled), '#') + std::string(size_t(kBarWidth - filled), '.');
  double elapsed = now - start_;
  std::string eta = fraction_ > 0 ? format_duration(elapsed / fraction_ - elapsed) : "-:--";
  std::string tflops = last_tflops_ > 0 && std::isfinite(last_tflops_) ? fmt::format("{:.1f}", last_tflops_) : "-";
  // Fields are padded to fixed widths, and the line is padded for the ETA's width, so that each line
  // fully overwrites the one before it.
  constexpr size_t kEtaWidth = 9;
  size_t total_digits = fmt::format("{}", total_).size();
  std::string line = fmt::format("\r[{}] {:>{}}/{} points  ETA {}  last {:>6} TFLOP/s{}", bar, points_done_,
                                 total_digits, total_, eta, tflops,
                                 std::string(kEtaWidth - std::min(kEtaWidth, eta.size()), ' '));
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  drawn_ = true;
  pending_ = false;
  last_draw_ = now;
}

std::string settle_text(const SettleFacts& f) {
  if (!f.watched) return "";
  const std::string at = fmt::format("{}{}", f.clock_mhz > 0 ? fmt::format("{:.0f} MHz", f.clock_mhz) : "clock unknown",
                                     f.power_w ? fmt::format(", {:.0f} W", *f.power_w) : "");
  if (f.settled) return fmt::format("warm-up settled after {:.1f} s at {}", f.seconds, at);
  return fmt::format("warm-up: the clock did not settle within {:.0f} % in {:.1f} s ({} at its end)",
                     SettleRule{}.tolerance * 100, f.seconds, at);
}

}  // namespace shapescope
