// perf_model.hpp's files: the model as JSON (what ships under models/ and `calibrate-model --out`
// writes), and the samples as CSV (what a model is fitted from, so that a shipped model can be
// fitted again and checked without the store it came from).
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "model/csv.hpp"
#include "model/model_config.hpp"
#include "model/perf_model.hpp"

namespace shapescope {

namespace {

constexpr int kFormat = 2;

nlohmann::json class_json(const PerfClass& c) {
  nlohmann::json j;
  j["dtype"] = std::string(to_string(c.dtype));
  j["layout"] = std::string(to_string(c.layout));
  j["align_bytes"] = c.align_bytes;
  j["bandwidth_gbs"] = c.bandwidth_gbs;
  j["bandwidth_source"] = c.bandwidth_source;
  j["range"] = {{"m", {c.min_m, c.max_m}}, {"n", {c.min_n, c.max_n}}, {"k", {c.min_k, c.max_k}}};
  j["accuracy"] = {{"held_out", c.accuracy.points}, {"median", c.accuracy.median}, {"p95", c.accuracy.p95}};
  for (const PerfKernelConfig& k : c.configs)
    j["configs"].push_back({{"tile_m", k.tile_m}, {"tile_n", k.tile_n}, {"splits", k.splits}, {"slots", k.slots},
                            {"rate_tflops", k.rate_tflops}, {"points", k.points}});
  j["from_aligned"] = c.from_aligned;
  // One row per measured shape, [m, n, k, batch, configuration, time in us, log ratio to the aligned
  // class]: what a prediction reads.
  for (const PerfClass::Kernel& k : c.kernels)
    j["kernels"].push_back({k.m, k.n, k.k, k.batch, k.config, k.us, k.log_ratio});
  return j;
}

PerfClass read_class(const nlohmann::json& j) {
  PerfClass c;
  const auto dtype = parse_dtype(j.at("dtype").get<std::string>());
  const auto layout = parse_layout(j.at("layout").get<std::string>());
  if (!dtype || !layout) throw nlohmann::json::other_error::create(501, "an unknown dtype or layout", nullptr);
  c.dtype = *dtype;
  c.layout = *layout;
  c.align_bytes = j.at("align_bytes").get<int64_t>();
  c.bandwidth_gbs = j.at("bandwidth_gbs").get<double>();
  c.bandwidth_source = j.at("bandwidth_source").get<std::string>();
  const nlohmann::json& r = j.at("range");
  c.min_m = r.at("m").at(0), c.max_m = r.at("m").at(1);
  c.min_n = r.at("n").at(0), c.max_n = r.at("n").at(1);
  c.min_k = r.at("k").at(0), c.max_k = r.at("k").at(1);
  const nlohmann::json& a = j.at("accuracy");
  c.accuracy = {a.at("held_out").get<int64_t>(), a.at("median").get<double>(), a.at("p95").get<double>()};
  for (const nlohmann::json& k : j.at("configs"))
    c.configs.push_back({k.at("tile_m").get<int>(), k.at("tile_n").get<int>(), k.at("splits").get<int64_t>(),
                         k.at("slots").get<int64_t>(), k.at("rate_tflops").get<double>(), k.at("points").get<int64_t>()});
  c.from_aligned = j.at("from_aligned").get<bool>();
  for (const nlohmann::json& row : j.at("kernels")) {
    PerfClass::Kernel k;
    k.m = row.at(0).get<int64_t>(), k.n = row.at(1).get<int64_t>(), k.k = row.at(2).get<int64_t>();
    k.batch = row.at(3).get<int64_t>(), k.config = row.at(4).get<size_t>();
    k.us = row.at(5).get<double>(), k.log_ratio = row.at(6).get<double>();
    if (k.config >= c.configs.size() || k.m < 1 || k.n < 1 || k.k < 1 || k.batch < 1 || !(k.us > 0) ||
        !std::isfinite(k.us) || !std::isfinite(k.log_ratio) || row.size() != 7)
      throw nlohmann::json::other_error::create(501, "a kernel row out of range", nullptr);
    k.set_logs();
    c.kernels.push_back(k);
  }
  if (c.kernels.empty()) throw nlohmann::json::other_error::create(501, "a class without measured shapes", nullptr);
  note_batches(c);
  for (const PerfKernelConfig& k : c.configs)
    if (k.tile_m < 1 || k.tile_n < 1 || k.splits < 1 || k.slots < 1 || !(k.rate_tflops > 0) ||
        !std::isfinite(k.rate_tflops))
      throw nlohmann::json::other_error::create(501, "a kernel configuration without a tile, slots or rate", nullptr);
  if (c.min_m < 1 || c.min_n < 1 || c.min_k < 1 || c.min_m > c.max_m || c.min_n > c.max_n || c.min_k > c.max_k)
    throw nlohmann::json::other_error::create(501, "a class whose range is empty or below 1", nullptr);
  if (!(c.accuracy.median >= 0) || !(c.accuracy.p95 >= 0) || !std::isfinite(c.accuracy.median) ||
      !std::isfinite(c.accuracy.p95))
    throw nlohmann::json::other_error::create(501, "a class whose error is not a non-negative number", nullptr);
  if (!(c.bandwidth_gbs > 0) || !std::isfinite(c.bandwidth_gbs)) throw nlohmann::json::other_error::create(501, "a class without a bandwidth", nullptr);
  return c;
}

const char* const kSamplesMark = "# shapescope samples: ";

// The first line's identity of the samples' GPU.
PerfSampleSet read_samples_mark(const std::string& text, const std::string& origin) {
  const size_t end = text.find('\n');
  if (text.rfind(kSamplesMark, 0) != 0 || end == std::string::npos)
    throw usage_error(fmt::format("{}: not a samples file (its first line must start with '{}')", origin, kSamplesMark));
  PerfSampleSet set;
  const std::string line = text.substr(std::string(kSamplesMark).size(), end - std::string(kSamplesMark).size());
  for (size_t at = 0; at < line.size();) {
    const size_t stop = std::min(line.find("; ", at), line.size());
    const std::string item = line.substr(at, stop - at);
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    try {
      if (key == "gpu") set.gpu = value;
      if (key == "sm_count") set.sm_count = std::stoi(value);
      if (key == "driver") set.driver = value;
      if (key == "cublas") set.cublas = value;
      if (key == "clock_mhz") set.clock_mhz = std::stod(value);
    } catch (const std::logic_error&) {
      throw usage_error(fmt::format("{}: line 1: '{}' is not a number", origin, item));
    }
    at = stop + 2;
  }
  if (set.gpu.empty()) throw usage_error(fmt::format("{}: line 1 names no gpu", origin));
  if (set.sm_count < 1)
    throw usage_error(fmt::format("{}: line 1: sm_count {} is not a GPU's number of SMs (1 or more)", origin, set.sm_count));
  if (!std::isfinite(set.clock_mhz) || set.clock_mhz < 0)
    throw usage_error(fmt::format("{}: line 1: clock_mhz {} is not an SM clock (MHz; 0: not recorded)", origin,
                                  set.clock_mhz));
  return set;
}

// A measured GEMM's time is at least this (a kernel launch alone takes microseconds): a sample below
// it, or not finite, was not measured, and a model fitted on it predicts infinite rates.
constexpr double kLeastSampleUs = 0.1;

// What no measurement gives, refused naming the line: a size or leading dimension outside cuBLAS's
// int (or below 1), a negative offset, a time below kLeastSampleUs or not finite.
void check_sample(const PerfSample& s, const std::string& origin, int64_t line) {
  const Problem& p = s.problem;
  for (const auto& [name, value] : {std::pair{"m", p.m}, std::pair{"n", p.n}, std::pair{"k", p.k},
                                    std::pair{"batch", p.batch}, std::pair{"lda", p.lda}, std::pair{"ldb", p.ldb},
                                    std::pair{"ldc", p.ldc}})
    if (value < 1 || value > kMaxGemmSize)
      throw usage_error(fmt::format("{}: line {}: {} {} is outside 1..{}", origin, line, name, value, kMaxGemmSize));
  for (const auto& [name, value] : {std::pair{"off_a", p.off_a}, std::pair{"off_b", p.off_b}, std::pair{"off_c", p.off_c}})
    if (value < 0) throw usage_error(fmt::format("{}: line {}: {} {} is negative", origin, line, name, value));
  if (!std::isfinite(s.median_us) || s.median_us < kLeastSampleUs)
    throw usage_error(fmt::format("{}: line {}: median_us {} is not a measured GEMM's time (at least {} us)", origin,
                                  line, s.median_us, kLeastSampleUs));
}

const char* const kCsvHeader = "m,n,k,batch,dtype,layout,lda,ldb,ldc,off_a,off_b,off_c,median_us,tile_m,tile_n,splits,slots";

}  // namespace

std::string perf_model_json(const PerfModel& m) {
  nlohmann::json j;
  j["format"] = kFormat;
  j["gpu"] = m.gpu;
  j["sm_count"] = m.sm_count;
  j["source"] = m.source;
  j["driver"] = m.driver;
  j["cublas"] = m.cublas;
  j["clock_mhz"] = m.clock_mhz;
  j["floor_us"] = m.floor_us;
  j["points"] = m.points;
  j["held_out"] = m.held_out;
  j["classes"] = nlohmann::json::array();
  for (const PerfClass& c : m.classes) j["classes"].push_back(class_json(c));
  return j.dump(1) + "\n";
}

PerfModel read_perf_model(const std::string& text, const std::string& origin) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (j.at("format").get<int>() != kFormat)
      throw usage_error(fmt::format("{}: a performance model of format {}, this shapescope reads {}", origin,
                                    j.at("format").dump(), kFormat));
    PerfModel m;
    m.gpu = j.at("gpu").get<std::string>();
    m.sm_count = j.at("sm_count").get<int>();
    m.source = j.at("source").get<std::string>();
    m.driver = j.at("driver").get<std::string>();
    m.cublas = j.at("cublas").get<std::string>();
    m.clock_mhz = j.at("clock_mhz").get<double>();
    m.floor_us = j.at("floor_us").get<double>();
    m.points = j.at("points").get<int64_t>();
    m.held_out = j.at("held_out").get<int64_t>();
    for (const nlohmann::json& c : j.at("classes")) m.classes.push_back(read_class(c));
    // What no measured GPU gives: no SMs, a clock or a launch floor that is not a number (the floor:
    // an empty kernel's time, microseconds), no class to predict with.
    if (m.sm_count < 1) throw nlohmann::json::other_error::create(501, "sm_count below 1", nullptr);
    if (!std::isfinite(m.clock_mhz) || m.clock_mhz < 0)
      throw nlohmann::json::other_error::create(501, "clock_mhz not an SM clock", nullptr);
    if (!std::isfinite(m.floor_us) || m.floor_us < 0 || m.floor_us > 1e3)
      throw nlohmann::json::other_error::create(501, "floor_us not a launch floor (0 to 1000 us)", nullptr);
    if (m.classes.empty()) throw nlohmann::json::other_error::create(501, "no class", nullptr);
    return m;
  } catch (const nlohmann::json::exception& e) {
    throw usage_error(fmt::format("{}: not a shapescope performance model ({})", origin, e.what()));
  }
}

std::string perf_samples_csv(const PerfSampleSet& set) {
  std::string out = fmt::format("{}gpu={}; sm_count={}; driver={}; cublas={}; clock_mhz={:.0f}\n", kSamplesMark, set.gpu,
                                set.sm_count, set.driver, set.cublas, set.clock_mhz);
  out += std::string(kCsvHeader) + "\n";
  for (const PerfSample& s : set.samples) {
    const Problem& p = s.problem;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", p.m, p.n, p.k, p.batch, to_string(p.dtype),
                       to_string(p.layout), p.lda, p.ldb, p.ldc, p.off_a, p.off_b, p.off_c, s.median_us, s.tile_m,
                       s.tile_n, s.splits, s.slots);
  }
  return out;
}

PerfSampleSet read_perf_samples_csv(const std::string& text, const std::string& origin) {
  PerfSampleSet set = read_samples_mark(text, origin);
  size_t pos = text.find('\n') + 1;
  const auto header = next_csv_record(text, pos);
  if (!header || fmt::format("{}", fmt::join(*header, ",")) != kCsvHeader)
    throw usage_error(fmt::format("{}: not a samples file (its second line must be {})", origin, kCsvHeader));
  std::vector<PerfSample>& out = set.samples;
  for (int64_t line = 3; pos < text.size(); ++line) {
    const auto r = next_csv_record(text, pos);
    if (!r || r->size() != 17)
      throw usage_error(fmt::format("{}: line {}: not {} fields", origin, line, 17));
    try {
      PerfSample s;
      Problem& p = s.problem;
      const auto i = [&](size_t f) { return std::stoll((*r)[f]); };
      p.m = i(0), p.n = i(1), p.k = i(2), p.batch = i(3);
      const auto dtype = parse_dtype((*r)[4]);
      const auto layout = parse_layout((*r)[5]);
      if (!dtype || !layout) throw std::invalid_argument("dtype or layout");
      p.dtype = *dtype, p.layout = *layout;
      p.lda = i(6), p.ldb = i(7), p.ldc = i(8), p.off_a = i(9), p.off_b = i(10), p.off_c = i(11);
      s.median_us = std::stod((*r)[12]);
      s.tile_m = int(i(13)), s.tile_n = int(i(14)), s.splits = i(15), s.slots = i(16);
      if (s.splits < 1) throw std::invalid_argument("splits");  // the sizes: check_sample, naming them
      out.push_back(s);
    } catch (const std::logic_error&) {
      throw usage_error(fmt::format("{}: line {}: a field is not what the header names", origin, line));
    }
    check_sample(out.back(), origin, line);
  }
  return set;
}

}  // namespace shapescope
