// `shapescope export` on the committed H200 store: the selected points with their annotations, the
// store only read, --out replaced only on success, bad input one line.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli_util.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;

const std::string kStore = std::string(SHAPESCOPE_TEST_DATA) + "/h200-2026-11-21/sweep_bf16_nn_1-4096.db";

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

size_t lines(const std::string& text) { return size_t(std::count(text.begin(), text.end(), '\n')); }

class ExportCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("shapescope_export_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    store_before_ = read_file(kStore);
  }
  void TearDown() override {
    EXPECT_TRUE(read_file(kStore) == store_before_) << "export changed the store";
    fs::remove_all(dir_);
  }
  fs::path dir_;
  std::string store_before_;
};

TEST_F(ExportCommand, CsvHasOneRowPerSelectedPointWithItsAnnotation) {
  const CliRun r = run("export --db '" + kStore + "' --n 1791..1793");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines(r.out), 4u) << r.out;  // the header and three points
  EXPECT_EQ(r.out.rfind("id,backend,algo,dtype,layout,m,n,k,", 0), 0u) << r.out.substr(0, 200);
  EXPECT_NE(r.out.find("nvjet_sm90_tst_256x128_64x4_1x4_h_bz_coopA_NNT"), std::string::npos);  // 1792's kernel
  EXPECT_NE(r.out.find(",tile_m,tile_n,"), std::string::npos);  // the annotation columns
  EXPECT_NE(r.out.find(",128,256,"), std::string::npos) << r.out;  // 1792's tile along M x N
}

TEST_F(ExportCommand, EveryPointWithoutASelection) {
  const CliRun all = run("export --db '" + kStore + "'");
  ASSERT_EQ(all.code, 0) << all.err;
  EXPECT_EQ(lines(all.out), 4097u);  // 1..4096 and the header
}

TEST_F(ExportCommand, JsonAndOutFile) {
  const fs::path out = dir_ / "squares.json";
  const CliRun r = run("export --db '" + kStore + "' --n 1792,4096 --format json --out '" + out.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, fmt::format("export: 2 points from '{}' to '{}'\n", kStore, out.string()));  // as plot says what it wrote
  EXPECT_EQ(r.err, "");
  const std::string json = read_file(out);
  EXPECT_EQ(json.front(), '[');
  EXPECT_NE(json.find("\"n\": 4096"), std::string::npos) << json.substr(0, 300);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1) << "a temporary file was left";
}

TEST_F(ExportCommand, BadInputIsOneLineAndWritesNothing) {
  const fs::path out = dir_ / "keep.csv";
  std::ofstream(out) << "precious\n";
  const std::string to = " --out '" + out.string() + "'";
  for (const auto& [args, code, says] : std::vector<std::tuple<std::string, int, std::string>>{
           {"--format xml", 2, "--format: 'xml'"},
           {"--dtype xx", 2, "--dtype: 'xx'"},
           {"--n 5000", 2, "no point in"},
           {"--backend cublsa", 2, "cublsa"}}) {
    const CliRun r = run("export --db '" + kStore + "' " + args + to);
    EXPECT_EQ(r.code, code) << args << ": " << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1u) << args << ": " << r.err;
  }
  const CliRun missing = run("export --db '" + (dir_ / "none.db").string() + "'" + to);
  EXPECT_EQ(missing.code, 5) << missing.err;
  EXPECT_FALSE(fs::exists(dir_ / "none.db"));
  const CliRun onto_store = run("export --db '" + kStore + "' --out '" + kStore + "'");
  EXPECT_EQ(onto_store.code, 2) << onto_store.err;
  EXPECT_EQ(read_file(out), "precious\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1) << "a file appeared";
}

TEST_F(ExportCommand, TableShortensLongKernelNamesUnlessWide) {
  const std::string whole = "cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1";  // 1793's kernel
  // A terminal wide enough for every column: the name at its 48 characters.
  const CliRun table = run_binary(std::string("COLUMNS=400 ") + kShapescopeBin, "export --db '" + kStore + "' --n 1793 --format table");
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("cutlass_75_tensorop_bf16_s16...256x128_nn_align1"), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find(whole), std::string::npos) << table.out;
  const CliRun wide = run("export --db '" + kStore + "' --n 1793 --format table --wide");
  ASSERT_EQ(wide.code, 0) << wide.err;
  EXPECT_NE(wide.out.find(whole), std::string::npos) << wide.out;
  EXPECT_LT(table.out.size(), wide.out.size());
  const CliRun csv = run("export --db '" + kStore + "' --n 1793");
  EXPECT_NE(csv.out.find(whole), std::string::npos);
}

}  // namespace
}  // namespace shapescope
