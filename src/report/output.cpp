#include "report/output.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "common/error.hpp"
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

// Fixed decimals for the table; "-" where the value is not a number (a failed or empty measurement).
std::string fixed(double value, int decimals) {
  if (!std::isfinite(value)) return "-";
  return fmt::format("{:.{}f}", value, decimals);
}

// One table cell per line: a control character (a newline in an algo name) would break the row.
std::string table_cell(std::string text) {
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return text;
}

std::string kernel_cell(const StoredPoint& point) {
  if (!point.annotated || point.kernels.empty()) return "-";
  std::string cell = short_kernel_name(point.kernels.front().name);
  if (cell.empty()) cell = "?";  // CUPTI gave no name
  if (point.kernels.size() > 1) cell += fmt::format(" +{}", point.kernels.size() - 1);
  return cell;
}

// Shortest text that reads back as the same double; JSON and CSV have no inf or nan, so those are empty.
std::string number(double value) {
  if (!std::isfinite(value)) return {};
  return fmt::format("{}", value);
}

// Annotation cells of the table: what explains the time, in a few characters each.
std::string align_cell(const Annotation& a) {
  return fmt::format("{}/{}/{}", a.alignment.m, a.alignment.n, a.alignment.k);
}
std::string rule_cell(const Annotation& a) {
  std::string failing;
  if (!a.alignment.a.ok()) failing += 'A';
  if (!a.alignment.b.ok()) failing += 'B';
  if (!a.alignment.c.ok()) failing += 'C';
  return failing.empty() ? "ok" : failing;
}
std::string grid_cell(const Annotation& a) {
  if (a.grid.tiles <= 0) return "-";
  std::string cell = fmt::format("{}x{}", a.grid.tiles_m, a.grid.tiles_n);
  if (a.grid.batch > 1) cell += fmt::format("x{}b", a.grid.batch);
  if (a.grid.splits > 1) cell += fmt::format("x{}k", a.grid.splits);
  return cell;
}

void write_points_table(std::ostream& out, const std::vector<StoredPoint>& points,
                 const std::vector<Annotation>& annotations) {
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
    if (flags.empty()) flags = "-";
    rows.push_back({table_cell(point.key.backend), table_cell(point.key.algo), std::string(to_string(p.dtype)),
                    std::string(to_string(p.layout)), fmt::format("{}", p.m), fmt::format("{}", p.n),
                    fmt::format("{}", p.k), fmt::format("{}", p.batch), fixed(t.median_us, 2), fixed(t.min_us, 2),
                    fixed(t.noise * 100, 1), fmt::format("{}", t.samples), tflops ? fixed(*tflops, 1) : "-",
                    a.roofline.pct_peak ? fixed(*a.roofline.pct_peak * 100, 1) : "-",
                    t.sm_clock_mhz ? fixed(*t.sm_clock_mhz, 0) : "-", flags, align_cell(a), rule_cell(a),
                    tile_cell(a), grid_cell(a), waves_cell(a),
                    a.waves.slots > 0 && a.waves.work > 0 ? fixed(a.waves.efficiency * 100, 0) : "-",
                    table_cell(kernel_cell(point))});
  }

  std::vector<std::string> header;
  std::vector<bool> right;
  for (const Column& column : columns) {
    header.push_back(column.header);
    right.push_back(column.right);
  }
  rows.insert(rows.begin(), std::move(header));
  write_table(out, rows, right);
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

}  // namespace

std::string json_string(std::string_view value) {
  std::string escaped = "\"";
  for (char c : value) {
    switch (c) {
      case '"': escaped += "\\\""; break;
      case '\\': escaped += "\\\\"; break;
      case '\n': escaped += "\\n"; break;
      case '\r': escaped += "\\r"; break;
      case '\t': escaped += "\\t"; break;
      case '\b': escaped += "\\b"; break;
      case '\f': escaped += "\\f"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          escaped += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
        } else {
          escaped += c;
        }
    }
  }
  escaped += '"';
  return escaped;
}

namespace {

// One output field: its name and its value already written as a JSON value, plus the CSV text
// (numbers and strings as they are, absent values empty, booleans 0/1).
struct Field {
  std::string name;
  std::string json;
  std::string csv;
};

Field text_field(std::string name, std::string_view value) {
  return {std::move(name), json_string(value), std::string(value)};
}
Field int_field(std::string name, int64_t value) {
  std::string text = fmt::format("{}", value);
  return {std::move(name), text, text};
}
Field uint_field(std::string name, uint64_t value) {
  std::string text = fmt::format("{}", value);
  return {std::move(name), text, text};
}
Field real_field(std::string name, std::optional<double> value) {
  std::string text = value ? number(*value) : std::string();
  return {std::move(name), text.empty() ? "null" : text, text};
}
Field bool_field(std::string name, bool value) {
  return {std::move(name), value ? "true" : "false", value ? "1" : "0"};
}
Field null_field(std::string name) { return {std::move(name), "null", ""}; }

// Every scalar field of a point, in output order (CSV columns, JSON keys); the kernels are added by
// each format in its own shape.
std::vector<Field> point_fields(const StoredPoint& point) {
  const Problem& p = point.key.problem;
  const DeviceContext& d = point.device;
  const TimingStats& t = point.result.timing;
  std::vector<Field> fields = {
      int_field("id", point.id),
      text_field("backend", point.key.backend),
      text_field("algo", point.key.algo),
      text_field("dtype", to_string(p.dtype)),
      text_field("layout", to_string(p.layout)),
      int_field("m", p.m),
      int_field("n", p.n),
      int_field("k", p.k),
      int_field("batch", p.batch),
      int_field("lda", p.lda),
      int_field("ldb", p.ldb),
      int_field("ldc", p.ldc),
      int_field("off_a", p.off_a),
      int_field("off_b", p.off_b),
      int_field("off_c", p.off_c),
      text_field("mode", point.key.hot ? "hot" : "cold"),
      text_field("gpu_name", d.gpu_name),
      text_field("gpu_uuid", d.gpu_uuid),
      text_field("driver", d.driver),
      text_field("cuda_runtime", d.cuda_runtime),
      text_field("cublas", d.cublas),
      text_field("cublaslt", d.cublaslt),
      real_field("median_us", t.median_us),
      real_field("min_us", t.min_us),
      real_field("max_us", t.max_us),
      real_field("q1_us", t.q1_us),
      real_field("q3_us", t.q3_us),
      int_field("samples", t.samples),
      real_field("noise", t.noise),
      bool_field("noisy", t.noisy),
      real_field("sm_clock_mhz", t.sm_clock_mhz),
      uint_field("throttle_reasons", t.throttle_reasons),
      bool_field("throttled", t.throttled),
      real_field("tflops", tflops_of(point)),
  };
  const std::optional<LtAlgoConfig>& lt = point.result.lt;
  if (lt) {
    fields.push_back(int_field("lt_algo_id", lt->algo_id));
    fields.push_back(int_field("lt_tile_id", lt->tile_id));
    fields.push_back(text_field("lt_tile", lt->tile));
    fields.push_back(int_field("lt_stages_id", lt->stages_id));
    fields.push_back(text_field("lt_stages", lt->stages));
    fields.push_back(int_field("lt_splitk", lt->splitk));
    fields.push_back(int_field("lt_reduction_scheme", lt->reduction_scheme));
    fields.push_back(text_field("lt_reduction", lt->reduction));
    fields.push_back(int_field("lt_swizzle", lt->swizzle));
    fields.push_back(int_field("lt_custom_option", lt->custom_option));
    fields.push_back(int_field("lt_cluster_shape_id", lt->cluster_shape_id));
    fields.push_back(text_field("lt_cluster", lt->cluster));
    fields.push_back(int_field("lt_inner_shape_id", lt->inner_shape_id));
    fields.push_back(real_field("lt_waves_count", double(lt->waves_count)));
    fields.push_back(int_field("lt_workspace_bytes", lt->workspace_bytes));
  } else {
    for (const char* name : {"lt_algo_id", "lt_tile_id", "lt_tile", "lt_stages_id", "lt_stages", "lt_splitk",
                             "lt_reduction_scheme", "lt_reduction", "lt_swizzle", "lt_custom_option",
                             "lt_cluster_shape_id", "lt_cluster", "lt_inner_shape_id", "lt_waves_count",
                             "lt_workspace_bytes"}) {
      fields.push_back(null_field(name));
    }
  }
  fields.push_back(text_field("measured_at", point.result.measured_at));
  fields.push_back(text_field("command", point.result.command));
  fields.push_back(bool_field("annotated", point.annotated));
  return fields;
}

// A point's fields followed by its annotation's.
std::vector<Field> all_fields(const StoredPoint& point, const Annotation& annotation) {
  std::vector<Field> fields = point_fields(point);
  for (const AnnotationField& field : annotation_fields(annotation)) {
    if (std::holds_alternative<std::string>(field.value)) {
      fields.push_back(text_field(field.name, std::get<std::string>(field.value)));
    } else {
      std::string text = field_text(field.value);
      fields.push_back({field.name, text.empty() ? "null" : text, text});
    }
  }
  return fields;
}

void write_csv(std::ostream& out, const std::vector<StoredPoint>& points,
               const std::vector<Annotation>& annotations) {
  // The header comes from the fields of a default point, so it cannot drift from the rows.
  std::string header;
  for (const Field& field : all_fields(StoredPoint{}, Annotation{})) header += field.name + ",";
  out << header << "kernels,kernel_grids\n";
  for (size_t p = 0; p < points.size(); ++p) {
    const StoredPoint& point = points[p];
    std::string line;
    for (const Field& field : all_fields(point, annotations[p])) line += csv_field(field.csv) + ",";
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

std::string kernel_json(const KernelRecord& kernel) {
  return fmt::format(
      "{{\"name\": {}, \"grid_x\": {}, \"grid_y\": {}, \"grid_z\": {}, \"block_x\": {}, \"block_y\": {}, "
      "\"block_z\": {}, \"cluster_x\": {}, \"cluster_y\": {}, \"cluster_z\": {}, \"registers\": {}, "
      "\"static_smem\": {}, \"dynamic_smem\": {}, \"duration_us\": {}}}",
      json_string(kernel.name), kernel.grid_x, kernel.grid_y, kernel.grid_z, kernel.block_x, kernel.block_y,
      kernel.block_z, kernel.cluster_x, kernel.cluster_y, kernel.cluster_z, kernel.registers,
      kernel.static_smem, kernel.dynamic_smem, real_field("", kernel.duration_us).json);
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

std::string tile_cell(const Annotation& a) {
  if (a.grid.tiles <= 0) return "-";
  return fmt::format("{}x{}", a.grid.tile_m, a.grid.tile_n);
}

std::string waves_cell(const Annotation& a) {
  if (a.waves.slots <= 0 || a.waves.work <= 0) return "-";
  return fmt::format("{:.2f}{}", a.waves.waves, a.persistent ? "p" : "");
}

std::optional<Format> parse_format(std::string_view text) {
  if (text == "table") return Format::kTable;
  if (text == "csv") return Format::kCsv;
  if (text == "json") return Format::kJson;
  return std::nullopt;
}

std::string point_json(const StoredPoint& point, const Annotation& annotation) {
  std::string object = "{";
  for (const Field& field : all_fields(point, annotation)) object += json_string(field.name) + ": " + field.json + ", ";
  object += "\"kernels\": [";
  for (size_t j = 0; j < point.kernels.size(); ++j) {
    if (j > 0) object += ", ";
    object += kernel_json(point.kernels[j]);
  }
  return object + "]}";
}

std::string annotation_json(const Annotation& annotation) {
  std::string object;
  for (const AnnotationField& field : annotation_fields(annotation)) {
    if (!object.empty()) object += ", ";
    const std::string text = field_text(field.value);
    object += json_string(field.name) + ": " +
              (std::holds_alternative<std::string>(field.value) ? json_string(text) : text.empty() ? "null" : text);
  }
  return "{" + object + "}";
}

std::string field_text(const FieldValue& value) {
  if (const auto* integer = std::get_if<int64_t>(&value)) return fmt::format("{}", *integer);
  if (const auto* real = std::get_if<double>(&value)) return number(*real);
  if (const auto* text = std::get_if<std::string>(&value)) return *text;
  return {};
}

void write_points(std::ostream& out, Format format, const std::vector<StoredPoint>& points,
                  const std::vector<Annotation>& annotations) {
  if (annotations.size() != points.size())
    throw Error(ExitCode::kInternal, fmt::format("write_points: {} points but {} annotations", points.size(),
                                                 annotations.size()));
  switch (format) {
    case Format::kTable: write_points_table(out, points, annotations); return;
    case Format::kCsv: write_csv(out, points, annotations); return;
    case Format::kJson: write_json(out, points, annotations); return;
  }
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

}  // namespace shapescope
