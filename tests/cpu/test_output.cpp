#include "report/output.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "model/csv.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;

// A name as CUPTI reports it: return type, namespaces, template arguments with commas and quotes.
const std::string kAwkwardName =
    "void cutlass::Kernel2<cutlass::gemm::GemmUniversal<int, \"quoted\", 128, 256>>(Params, int)";

StoredPoint sample_point(int64_t id, double median_us = 200) {
  StoredPoint point;
  point.id = id;
  point.device.gpu_name = "NVIDIA H100 80GB HBM3";
  point.device.gpu_uuid = "GPU-1a2b3c4d";
  point.device.driver = "580.159.04";
  point.device.cuda_runtime = "13.0";
  point.device.cublas = "13.1.0";
  point.device.cublaslt = "13.1.0";
  point.key.backend = BackendKind::kCublasLt;
  point.key.algo = "h0";
  Problem& p = point.key.problem;
  p.m = p.n = p.k = 4096;
  p.lda = p.ldb = p.ldc = 4096;
  point.result.timing.median_us = median_us;
  point.result.timing.min_us = median_us - 1.234;
  point.result.timing.max_us = median_us + 5;
  point.result.timing.q1_us = median_us - 0.5;
  point.result.timing.q3_us = median_us + 0.5;
  point.result.timing.samples = 40;
  point.result.timing.noise = 1.0 / median_us;
  point.result.measured_at = "2025-06-01T12:34:56Z";
  point.result.command = "shapescope sweep -m 4096 --note \"x, y\"";
  return point;
}

KernelRecord kernel(const std::string& name) {
  KernelRecord record;
  record.name = name;
  record.grid_x = 132;
  record.grid_y = 1;
  record.grid_z = 1;
  record.block_x = 384;
  record.block_y = 1;
  record.block_z = 1;
  record.cluster_x = 1;
  record.cluster_y = 2;
  record.cluster_z = 1;
  record.registers = 168;
  record.dynamic_smem = 232448;
  record.duration_us = 198.5;
  return record;
}

std::vector<StoredPoint> sample_points() {
  StoredPoint plain = sample_point(1);
  plain.result.timing.sm_clock_mhz = 1755;

  StoredPoint lt = sample_point(2, 150);
  lt.key.problem.dtype = DType::kFp8;
  lt.key.problem.layout = Layout::kTN;
  lt.result.timing.noisy = true;
  lt.result.timing.throttled = true;
  lt.result.timing.throttle_reasons = 4;
  LtAlgoConfig config;
  config.algo_id = 66;
  config.tile = "256x128";
  config.tile_size = std::make_pair(256, 128);
  config.stages = "64x4";
  config.reduction = "none";
  config.cluster = "1x2x1";
  config.waves_count = 0.97f;
  lt.result.lt = config;
  lt.annotated = true;
  lt.kernels = {kernel(kAwkwardName), kernel("splitKreduce_kernel<32, 16>")};
  lt.kernels[1].grid_x = 64;
  lt.kernels[1].grid_y = 16;

  StoredPoint escapes = sample_point(3, 1000);
  escapes.key.algo = "weird \"algo\"\\ with\ttab\nand newline";
  escapes.annotated = true;
  escapes.kernels = {kernel("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT")};
  return {plain, lt, escapes};
}

// The points table with every column (report/table.hpp: as --wide; these tests read every cell).
struct WideTables {
  WideTables() { set_wide_tables(true); }
  ~WideTables() { set_wide_tables(false); }
};

std::string render(Format format, const std::vector<StoredPoint>& points, KernelNames names = KernelNames::kShort) {
  const WideTables wide;
  std::ostringstream out;
  std::vector<Annotation> annotations;
  const ModelGpu gpu = model_gpu(*find_profile("h200"));
  for (const StoredPoint& point : points) annotations.push_back(annotate(point, gpu));
  write_points(out, format, points, annotations, names);
  return out.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The records of a CSV text, read by the GEMM lists' reader (quoted fields may hold commas, doubled
// quotes and newlines); every record ends with a newline.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  EXPECT_TRUE(!text.empty() && text.back() == '\n') << "no newline after the last record";
  std::vector<std::vector<std::string>> records;
  for (size_t pos = 0; pos < text.size();) {
    const std::optional<std::vector<std::string>> record = next_csv_record(text, pos);
    EXPECT_TRUE(record) << "unterminated quote";
    if (!record) break;
    records.push_back(*record);
  }
  return records;
}

// The kernel column of the single point's table row (--wide unless asked): the column starts where
// its header does.
std::string kernel_cell(const StoredPoint& point, KernelNames names = KernelNames::kWhole) {
  std::vector<std::string> lines = lines_of(render(Format::kTable, {point}, names));
  EXPECT_EQ(lines.size(), 2u);
  if (lines.size() != 2) return {};
  size_t column = lines[0].find("kernel");
  EXPECT_NE(column, std::string::npos);
  return lines[1].substr(column);
}

bool have_python() { return std::system("command -v python3 >/dev/null 2>&1") == 0; }

class TempDir {
 public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "shapescope_output_test_XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Everything written to stderr while `body` runs.
template <typename Body>
std::string capture_stderr(Body body) {
  TempDir dir;
  std::string path = dir.path() + "/stderr";
  std::fflush(stderr);
  int saved = dup(2);
  FILE* file = std::fopen(path.c_str(), "w");
  dup2(fileno(file), 2);
  body();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::fclose(file);
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(OutputFormat, ParsesKnownNames) {
  EXPECT_EQ(parse_format("table"), Format::kTable);
  EXPECT_EQ(parse_format("csv"), Format::kCsv);
  EXPECT_EQ(parse_format("json"), Format::kJson);
  EXPECT_FALSE(parse_format("xml"));
  EXPECT_FALSE(parse_format(""));
  EXPECT_FALSE(parse_format("CSV"));
  // --format is kept typed; its name is written back only for messages and --help's default.
  for (Format f : {Format::kTable, Format::kCsv, Format::kJson}) EXPECT_EQ(parse_format(to_string(f)), f);
}

TEST(OutputTable, HeaderWithUnitsAndOneLinePerPoint) {
  std::vector<StoredPoint> points = sample_points();
  std::string text = render(Format::kTable, points);
  std::vector<std::string> lines = lines_of(text);
  ASSERT_EQ(lines.size(), points.size() + 1);
  for (const char* header : {"backend", "algo", "dtype", "layout", "M", "N", "K", "batch", "median [us]",
                             "min [us]", "noise [%]", "n", "TFLOP/s", "clock [MHz]", "flags", "kernel"}) {
    EXPECT_NE(lines[0].find(header), std::string::npos) << header;
  }
  EXPECT_EQ(lines[0].rfind("backend", 0), 0u);
  for (const std::string& line : lines) EXPECT_NE(line.back(), ' ') << "trailing blanks: " << line;

  // Numbers right-aligned under their headers: each row ends its median where the header does.
  size_t median_end = lines[0].find("median [us]") + std::string("median [us]").size();
  EXPECT_EQ(lines[1].substr(median_end - 6, 6), "200.00");
  EXPECT_EQ(lines[2].substr(median_end - 6, 6), "150.00");
}

TEST(OutputTable, FormatsNumbersFlagsAndClock) {
  std::vector<StoredPoint> points = sample_points();
  std::vector<std::string> lines = lines_of(render(Format::kTable, points));
  ASSERT_EQ(lines.size(), 4u);
  // 2 * 4096^3 flop in 200 us = 687.2 TFLOP/s; noise 1/200 = 0.5 %.
  EXPECT_NE(lines[1].find(" 687.2 "), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find(" 198.77 "), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find(" 0.5 "), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find(" 1755 "), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find(" bf16 "), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find(" nn "), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find(" fp8 "), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find(" tn "), std::string::npos) << lines[2];

  size_t flags = lines[0].find("flags");
  size_t clock_end = lines[0].find("clock [MHz]") + std::string("clock [MHz]").size();
  EXPECT_EQ(lines[1].substr(flags, 2), "- ");
  EXPECT_EQ(lines[2].substr(flags, 3), "NT ");
  EXPECT_EQ(lines[2].substr(clock_end - 2, 2), " -") << "unknown clock";
}

TEST(OutputTable, ZeroMedianHasNoThroughput) {
  StoredPoint point = sample_point(1, 0);
  std::vector<std::string> lines = lines_of(render(Format::kTable, {point}));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].find("inf"), std::string::npos) << lines[1];
  size_t tflops_end = lines[0].find("TFLOP/s") + std::string("TFLOP/s").size();
  EXPECT_EQ(lines[1].substr(tflops_end - 2, 2), " -") << lines[1];
}

TEST(OutputTable, EmptyListIsHeaderOnly) {
  EXPECT_EQ(lines_of(render(Format::kTable, {})).size(), 1u);
}

TEST(OutputTable, KernelNamesAreShortened) {
  StoredPoint point = sample_point(1);
  EXPECT_EQ(kernel_cell(point), "-") << "not annotated";
  point.annotated = true;
  EXPECT_EQ(kernel_cell(point), "-") << "annotated, nothing launched";

  point.kernels = {kernel(kAwkwardName)};
  EXPECT_EQ(kernel_cell(point), "cutlass::gemm::GemmUniversal") << "CUTLASS's wrapper shows its argument";

  // As CUPTI reported it on an H200 (cuBLAS 13.1) for a bf16 nn GEMM with n = 4095.
  point.kernels = {kernel("void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1>"
                          "(cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1::Params)")};
  EXPECT_EQ(kernel_cell(point), "cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1");
  EXPECT_EQ(kernel_cell(point, KernelNames::kShort), "cutlass_75_tensorop_bf16_s16...256x128_nn_align1");

  point.kernels = {kernel("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"), kernel("splitKreduce_kernel")};
  EXPECT_EQ(kernel_cell(point), "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT +1");
  EXPECT_EQ(kernel_cell(point, KernelNames::kShort), kernel_cell(point)) << "46 characters fit";

  point.kernels = {kernel("void gemv2T_kernel_val<int, int, float, float, 128, 16, 4, 4, false, false>(params)"),
                   kernel("a"), kernel("b")};
  EXPECT_EQ(kernel_cell(point), "gemv2T_kernel_val +2");

  point.kernels = {kernel("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nn(int, float)")};
  EXPECT_EQ(kernel_cell(point), "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nn");

  std::string long_name =
      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_"
      "kernel__5x_cublas";
  point.kernels = {kernel(long_name)};
  EXPECT_EQ(kernel_cell(point), long_name.substr(0, 72));

  point.kernels = {kernel("")};
  EXPECT_EQ(kernel_cell(point), "?") << "CUPTI gave no name";
}

TEST(OutputCsv, EveryRowHasTheHeadersColumnCount) {
  std::vector<StoredPoint> points = sample_points();
  std::string text = render(Format::kCsv, points);
  std::vector<std::vector<std::string>> records = parse_csv(text);
  ASSERT_EQ(records.size(), points.size() + 1);
  const std::vector<std::string>& header = records[0];
  for (const auto& record : records) EXPECT_EQ(record.size(), header.size());

  auto column = [&](const std::string& name) {
    auto found = std::find(header.begin(), header.end(), name);
    EXPECT_NE(found, header.end()) << name;
    return size_t(found - header.begin());
  };
  for (const char* name :
       {"backend", "algo", "dtype", "layout", "m", "n", "k", "batch", "lda", "ldb", "ldc", "off_a", "off_b",
        "off_c", "mode", "gpu_name", "gpu_uuid", "driver", "cublas", "median_us", "min_us", "max_us", "q1_us",
        "q3_us", "samples", "noise", "noisy", "sm_clock_mhz", "throttle_reasons", "throttled", "tflops",
        "lt_algo_id", "lt_tile_id", "lt_tile", "lt_stages_id", "lt_stages", "lt_splitk", "lt_reduction_scheme",
        "lt_reduction", "lt_swizzle", "lt_custom_option", "lt_cluster_shape_id", "lt_cluster",
        "lt_inner_shape_id", "lt_waves_count", "lt_workspace_bytes", "kernels", "kernel_grids", "clocks", "stop",
        "median_ci", "sentinel_drift", "reruns", "drifted"}) {
    column(name);
  }
  EXPECT_EQ(records[1][column("clocks")], "sustained");
  EXPECT_EQ(records[1][column("stop")], "unrecorded");
  EXPECT_EQ(records[1][column("median_ci")], "") << "absent";
  EXPECT_EQ(records[1][column("reruns")], "0");
  EXPECT_EQ(records[2][column("kernels")], kAwkwardName + ";splitKreduce_kernel<32, 16>");
  EXPECT_EQ(records[2][column("kernel_grids")], "132x1x1;64x16x1");
  EXPECT_EQ(records[2][column("lt_tile")], "256x128");
  EXPECT_EQ(records[2][column("lt_algo_id")], "66");
  EXPECT_EQ(records[2][column("dtype")], "fp8");
  EXPECT_EQ(records[2][column("noisy")], "1");
  EXPECT_EQ(records[1][column("lt_tile")], "") << "no lt config";
  EXPECT_EQ(records[1][column("lt_algo_id")], "");
  EXPECT_EQ(records[1][column("kernels")], "");
  EXPECT_EQ(records[1][column("sm_clock_mhz")], "1755");
  EXPECT_EQ(records[2][column("sm_clock_mhz")], "");
  EXPECT_EQ(records[1][column("mode")], "cold");
  EXPECT_EQ(records[3][column("algo")], "weird \"algo\"\\ with\ttab\nand newline");
  EXPECT_EQ(records[1][column("command")], "shapescope sweep -m 4096 --note \"x, y\"");
  EXPECT_NEAR(std::stod(records[1][column("tflops")]), 687.19476736, 1e-6);
  EXPECT_EQ(std::stod(records[1][column("min_us")]), 200 - 1.234);
}

TEST(OutputCsv, EmptyListIsHeaderOnly) {
  std::vector<std::vector<std::string>> records = parse_csv(render(Format::kCsv, {}));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].front(), "id");
}

// A structural check that needs no JSON parser: outside strings, brackets balance; strings close;
// no raw control characters inside strings.
void expect_balanced_json(const std::string& text) {
  std::vector<char> stack;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      ASSERT_GE(static_cast<unsigned char>(c), 0x20) << "raw control character at " << i;
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      stack.push_back(c);
    } else if (c == ']' || c == '}') {
      ASSERT_FALSE(stack.empty()) << "unbalanced at " << i;
      ASSERT_EQ(stack.back(), c == ']' ? '[' : '{') << "mismatched at " << i;
      stack.pop_back();
    }
  }
  EXPECT_FALSE(in_string);
  EXPECT_TRUE(stack.empty());
}

TEST(OutputJson, IsWellFormedAndKeepsContent) {
  std::vector<StoredPoint> points = sample_points();
  std::string text = render(Format::kJson, points);
  expect_balanced_json(text);
  if (!have_python()) GTEST_SKIP() << "python3 not found: only the structural check ran";

  TempDir dir;
  std::string path = dir.path() + "/points.json";
  std::ofstream(path) << text;
  // The awkward strings travel in files, so shell quoting cannot bend them.
  std::ofstream(dir.path() + "/name") << kAwkwardName;
  std::ofstream(dir.path() + "/algo") << points[2].key.algo;
  // Prints facts about the parsed document for the checks below; exits non-zero if it does not parse.
  std::ofstream(dir.path() + "/check.py")
      << "import json,sys\n"
         "d=json.load(open(sys.argv[1]))\n"
         "print(len(d))\n"
         "print(d[1]['kernels'][0]['name']==open(sys.argv[2]).read())\n"
         "print(d[2]['algo']==open(sys.argv[3]).read())\n"
         "print(d[0]['lt_tile'] is None, d[1]['lt_tile'], d[1]['lt_algo_id'], d[1]['noisy'], d[0]['noisy'])\n"
         "print(d[0]['sm_clock_mhz'], d[1]['sm_clock_mhz'], round(d[0]['tflops'], 1), d[0]['mode'])\n"
         "print(sorted(d[1]['kernels'][1].keys()))\n"
         "print(d[1]['kernels'][1]['grid_x'], d[1]['kernels'][1]['cluster_y'], d[1]['kernels'][1]['duration_us'])\n";
  std::string command = "python3 " + dir.path() + "/check.py " + path + " " + dir.path() + "/name " +
                        dir.path() + "/algo";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  int status = pclose(pipe);
  ASSERT_EQ(status, 0) << "python3 rejected the JSON:\n" << text;
  std::vector<std::string> lines = lines_of(output);
  ASSERT_EQ(lines.size(), 7u) << output;
  EXPECT_EQ(lines[0], "3");
  EXPECT_EQ(lines[1], "True") << "kernel name with commas and quotes";
  EXPECT_EQ(lines[2], "True") << "string with quote, backslash, tab and newline";
  EXPECT_EQ(lines[3], "True 256x128 66 True False");
  EXPECT_EQ(lines[4], "1755 None 687.2 cold");
  EXPECT_EQ(lines[5],
            "['block_x', 'block_y', 'block_z', 'cluster_x', 'cluster_y', 'cluster_z', 'duration_us', "
            "'dynamic_smem', 'grid_x', 'grid_y', 'grid_z', 'name', 'registers', 'static_smem']");
  EXPECT_EQ(lines[6], "64 2 198.5");
}

TEST(OutputJson, EmptyListIsAnEmptyArray) {
  std::string text = render(Format::kJson, {});
  EXPECT_EQ(text, "[]\n");
}

TEST(OutputJson, ZeroMedianGivesNullThroughput) {
  std::string text = render(Format::kJson, {sample_point(1, 0)});
  expect_balanced_json(text);
  EXPECT_NE(text.find("\"tflops\": null"), std::string::npos) << text;
  EXPECT_EQ(text.find("inf"), std::string::npos) << text;
}

TEST(OutputProgress, DisabledWritesNothing) {
  std::string written = capture_stderr([] {
    Progress progress(10, false);
    progress.update(0.5, 5, 100);
    progress.finish();
  });
  EXPECT_EQ(written, "");
}

TEST(OutputProgress, FinishWithoutUpdatesWritesNothing) {
  std::string written = capture_stderr([] {
    Progress progress(10, true);
    progress.finish();
  });
  EXPECT_EQ(written, "");
}

TEST(OutputProgress, ThrottlesRedrawsButAlwaysDrawsTheLastState) {
  std::string written = capture_stderr([] {
    Progress progress(100, true);
    for (size_t done = 1; done <= 100; ++done) progress.update(double(done) / 100, done, 712.34);
    progress.finish();
    progress.finish();
  });
  // The first update draws; the next 99 arrive within 100 ms; finish() draws the last one.
  EXPECT_EQ(std::count(written.begin(), written.end(), '\r'), 2) << written;
  EXPECT_EQ(std::count(written.begin(), written.end(), '\n'), 1) << written;
  ASSERT_FALSE(written.empty());
  EXPECT_EQ(written.back(), '\n');
  std::string last = written.substr(written.rfind('\r'));
  EXPECT_NE(last.find("[####################] 100/100 points  ETA 0:00  last  712.3 TFLOP/s"),
            std::string::npos)
      << last;
  std::string first = written.substr(0, written.find('\r', 1));
  EXPECT_NE(first.find("  1/100 points"), std::string::npos) << first;
  EXPECT_EQ(first.size(), last.size() - 1) << "lines of equal width overwrite each other fully";
}

TEST(OutputProgress, RedrawsAfterTheInterval) {
  const auto start = std::chrono::steady_clock::now();
  double half_done = 0;  // seconds from before the Progress to its second update: at least 0.15
  std::string written = capture_stderr([&] {
    Progress progress(4, true);
    progress.update(0.25, 1, 10);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    progress.update(0.5, 2, 0);
    half_done = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    progress.finish();
  });
  EXPECT_EQ(std::count(written.begin(), written.end(), '\r'), 2) << written;
  std::string last = written.substr(written.rfind('\r'));
  EXPECT_NE(last.find("2/4 points"), std::string::npos) << last;
  EXPECT_NE(last.find("last      - TFLOP/s"), std::string::npos) << "no throughput for a failed point: " << last;
  // Half done after ~150 ms: about 150 ms to go, "ETA 0:00". A busy machine can stretch the sleep,
  // and the ETA with it, but not past the time the test took to get half done.
  const size_t eta = last.find("ETA 0:");
  ASSERT_NE(eta, std::string::npos) << last;
  EXPECT_LE(std::stol(last.substr(eta + 6, 2)), std::lround(half_done)) << last << " (" << half_done << " s)";
}

}  // namespace
}  // namespace shapescope

namespace shapescope {
namespace {

TEST(OutputTable, LongKernelNamesAreShortenedInTheMiddleUnlessWide) {
  const std::string name = "cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1";  // 57 characters
  EXPECT_EQ(shorten_middle(name, kKernelCellWidth), "cutlass_75_tensorop_bf16_s16...256x128_nn_align1");
  EXPECT_EQ(shorten_middle(name, kKernelCellWidth).size(), kKernelCellWidth);
  EXPECT_EQ(shorten_middle("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", kKernelCellWidth),
            "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT");  // 46: fits

  StoredPoint point = sample_point(1, 100);
  point.annotated = true;
  point.kernels = {kernel(name)};
  const std::vector<Annotation> annotations = {annotate(point, model_gpu(*find_profile("h200")))};
  auto write = [&](Format format, KernelNames names) {
    const WideTables wide;
    std::ostringstream out;
    write_points(out, format, {point}, annotations, names);
    return out.str();
  };
  const std::string table = write(Format::kTable, KernelNames::kShort);
  EXPECT_NE(table.find("cutlass_75_tensorop_bf16_s16...256x128_nn_align1"), std::string::npos) << table;
  EXPECT_EQ(table.find(name), std::string::npos) << table;
  EXPECT_NE(write(Format::kTable, KernelNames::kWhole).find(name), std::string::npos);
  // Programs get the whole name whatever the table does.
  EXPECT_NE(write(Format::kCsv, KernelNames::kShort).find(name), std::string::npos);
  EXPECT_NE(write(Format::kJson, KernelNames::kShort).find(name), std::string::npos);
}

}  // namespace
}  // namespace shapescope
