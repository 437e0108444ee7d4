// plot: the rules it draws by (selection, swept size, "bigger and faster", new waves, kernel groups,
// tile grids), and every kind rendered by the real binary and gnuplot from the committed H200
// stores: a well-formed SVG with exactly one hover text per plotted point, a PNG of the expected
// size, the script and the data kept; and one line with its exit code for every refusal. The
// stores are opened read-only. Tests that need gnuplot skip without it (CI installs gnuplot-nox).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_util.hpp"
#include "common/error.hpp"
#include "model/device_profile.hpp"
#include "report/plot_figures.hpp"
#include "report/plot_gnuplot.hpp"
#include "views/plot_select.hpp"
#include "store/store.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;

const std::string kData = SHAPESCOPE_TEST_DATA;
const std::string kSquares = kData + "/h200-2026-11-21/sweep_bf16_nn_1-4096.db";
const std::string kGallery = kData + "/h200-2026-11-21-explain/gallery.db";
const std::string kExplain = kData + "/h200-2026-11-21-explain/explain.db";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

size_t count_of(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

int lines(const std::string& text) { return int(std::count(text.begin(), text.end(), '\n')); }

// Width and height from a PNG's IHDR chunk (big-endian at bytes 16..23), or {0, 0}.
std::pair<uint32_t, uint32_t> png_size(const std::string& path) {
  const std::string data = read_text(path);
  const std::string signature = "\x89PNG\r\n\x1a\n";
  if (data.size() < 24 || data.compare(0, signature.size(), signature) != 0 || data.compare(12, 4, "IHDR") != 0)
    return {0, 0};
  auto be32 = [&](size_t at) {
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(data[at + i]);
    return v;
  };
  return {be32(16), be32(20)};
}

// Enough of XML to catch a broken file: every element closed in order, quotes inside tags
// respected (gnuplot's hover text holds '>'), comments, CDATA and declarations skipped. Returns ""
// when well-formed, else what is wrong.
std::string xml_problem(const std::string& text) {
  std::vector<std::string> open;
  size_t i = 0;
  auto skip_past = [&](const std::string& end) {
    const size_t at = text.find(end, i);
    if (at == std::string::npos) return false;
    i = at + end.size();
    return true;
  };
  while ((i = text.find('<', i)) != std::string::npos) {
    if (text.compare(i, 4, "<!--") == 0) {
      if (!skip_past("-->")) return "unterminated comment";
      continue;
    }
    if (text.compare(i, 9, "<![CDATA[") == 0) {
      if (!skip_past("]]>")) return "unterminated CDATA";
      continue;
    }
    if (text.compare(i, 2, "<?") == 0 || text.compare(i, 2, "<!") == 0) {
      if (!skip_past(">")) return "unterminated declaration";
      continue;
    }
    size_t j = i + 1;
    char quote = 0;
    for (; j < text.size(); ++j) {
      const char c = text[j];
      if (quote) {
        if (c == quote) quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '>') {
        break;
      }
    }
    if (j >= text.size()) return "unterminated tag at " + std::to_string(i);
    const std::string tag = text.substr(i + 1, j - i - 1);
    i = j + 1;
    if (tag.empty()) return "empty tag";
    if (tag.front() == '/') {
      const std::string name = tag.substr(1, tag.find_first_of(" \t\n") - 1);
      if (open.empty() || open.back() != name) return "</" + name + "> closes " + (open.empty() ? "nothing" : open.back());
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(tag.substr(0, tag.find_first_of(" \t\n")));
    }
  }
  if (!open.empty()) return "<" + open.back() + "> never closed";
  return "";
}

bool have_gnuplot() {
  try {
    find_gnuplot("gnuplot");
    return true;
  } catch (const Error&) {
    return false;
  }
}

// A directory of its own per test (ctest runs each test as its own process, in parallel), removed
// when the test ends, passed or failed.
std::vector<std::string>& test_dirs() {
  static std::vector<std::string> dirs;
  return dirs;
}
class RemoveTestDirs : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo&) override {
    std::error_code ignored;
    for (const std::string& dir : test_dirs()) fs::remove_all(dir, ignored);
    test_dirs().clear();
  }
};
const bool kRemovesTestDirs = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new RemoveTestDirs);
  return true;
}();

std::string test_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string dir = ::testing::TempDir() + "shapescope_plot_" + info->name() + "_" + std::to_string(getpid()) + "/";
  fs::remove_all(dir);
  fs::create_directories(dir);
  test_dirs().push_back(dir);
  return dir;
}

std::vector<StoredPoint> load(const std::string& path) {
  const Store store(path, Store::Access::kReadOnly);
  return store.load_all();
}

Selection select(const std::string& path, const PlotFilter& filter, Algos algos = Algos::kOne) {
  const Store store(path, Store::Access::kReadOnly);
  return select_points(store.load_all(), path, filter, algos, "plot test", store);
}

// One line, the exit code, and the words that must be in it.
void expect_refused(const std::string& args, ExitCode code, const std::vector<std::string>& words) {
  const CliRun r = run("plot " + args);
  EXPECT_EQ(r.code, int(code)) << args << "\n" << r.err;
  EXPECT_EQ(lines(r.err), 1) << args << "\n" << r.err;
  for (const auto& w : words) EXPECT_NE(r.err.find(w), std::string::npos) << args << ": " << r.err;
}

TEST(PlotRules, BiggerAndFasterNeedsASmallerSizeClearlySlower) {
  // 10 us, 30 us, then 20 us (the 30 us size is smaller and 50 % slower), then 29 us (within 10 %).
  const std::vector<int> slower = slower_smaller_size({10, 30, 20, 29, 40}, 0.10);
  EXPECT_EQ(slower, (std::vector<int>{-1, -1, 1, -1, -1}));
  EXPECT_EQ(slower_smaller_size({}, 0.10), std::vector<int>{});
}

Annotation with_waves(int tile_m, int tile_n, int64_t tiles, int64_t slots) {
  Annotation a;
  a.grid.tile_m = tile_m;
  a.grid.tile_n = tile_n;
  a.grid.tiles = tiles;
  a.waves = waves_of(tiles, slots);
  a.waves_over = "tiles";
  return a;
}

TEST(PlotRules, NewWaveStartsWhenTheSameTileNeedsAnotherRound) {
  const std::vector<Annotation> a = {
      with_waves(128, 256, 120, 132),  // 1 round
      with_waves(64, 64, 400, 132),    // another kernel: its own history starts here
      with_waves(128, 256, 133, 132),  // 2 rounds: new wave
      with_waves(128, 256, 140, 132),  // still 2
      with_waves(64, 64, 300, 132),    // 3 rounds, fewer than its 4 before
      with_waves(64, 64, 530, 132),    // 5 rounds: new wave
      Annotation{},                    // unknown tile: skipped
  };
  EXPECT_EQ(new_wave_starts(a), (std::vector<size_t>{2, 5}));
}

TEST(PlotRules, KernelGroupsKeepFewKernelsByNameAndFoldMany) {
  const std::vector<StoredPoint> points = load(kSquares);
  const Store store(kSquares, Store::Access::kReadOnly);
  std::vector<StoredPoint> few(points.begin() + 2000, points.begin() + 2004);
  std::vector<Annotation> few_annotations;
  for (const StoredPoint& p : few) few_annotations.push_back(annotate(p, model_gpu(p.device)));
  const std::vector<std::string> named = kernel_groups(few, few_annotations, 12);
  for (size_t i = 0; i < few.size(); ++i) EXPECT_EQ(named[i].find("void "), std::string::npos) << named[i];

  PlotFilter all;
  const Selection s = select(kSquares, all);
  const std::vector<std::string> groups = kernel_groups(s.points, s.annotations, 12);
  ASSERT_EQ(groups.size(), s.points.size());
  EXPECT_LE(std::set<std::string>(groups.begin(), groups.end()).size(), 12u);
  // Every Hopper kernel stays recognisable as one: n = 4096 ran nvjet, n = 4095 a CUTLASS 2 kernel.
  for (size_t i = 0; i < s.points.size(); ++i) {
    if (s.points[i].key.problem.n == 4096) {
      EXPECT_EQ(groups[i].rfind("nvjet", 0), 0u) << groups[i];
    }
    if (s.points[i].key.problem.n == 4095) {
      EXPECT_EQ(groups[i], "cutlass_75 256x128 align1");
    }
  }
}

TEST(PlotRules, TooltipAndStringsCannotBreakTheScriptOrTheSvg) {
  EXPECT_EQ(tooltip_field({"a \"b\" 'c'", "d\\e\x01"}), "\"a `b` `c`\\nd`e?\"");
  EXPECT_EQ(gnuplot_string("say \"hi\"\\\nnext"), "\"say \\\"hi\\\"\\\\\\nnext\"");
}

TEST(PlotRules, OutPathIsADirectoryOrAPrefix) {
  const std::string dir = test_dir();
  PlotPaths p = plot_paths(dir, "flops");
  EXPECT_EQ(p.file("svg"), (fs::path(dir) / "flops.svg").string());
  p = plot_paths(dir + "made/", "waves");
  EXPECT_TRUE(fs::is_directory(dir + "made"));
  EXPECT_EQ(p.name, "waves");
  p = plot_paths(dir + "my-figure", "flops");
  EXPECT_EQ(p.file("png"), dir + "my-figure.png");
  EXPECT_THROW(plot_paths(dir + "missing/prefix", "flops"), Error);
  EXPECT_THROW(plot_paths("", "flops"), Error);
}

TEST(PlotSelect, SweptSizeIsTheDimensionThatVaries) {
  PlotFilter squares;
  squares.n = size_filter("64..4096:64", "--n");
  Selection s = select(kGallery, squares);
  EXPECT_EQ(s.points.size(), 64u);  // cublas default only, out of cublas + cublaslt h0..h3
  EXPECT_NE(s.note.find("cublas default"), std::string::npos);
  EXPECT_EQ(swept_axis(s.points, "plot flops").name, "n");
  EXPECT_NE(swept_axis(s.points, "plot flops").label.find("M = N = K"), std::string::npos);
  EXPECT_EQ(s.context.gpu_name, "NVIDIA H200");
  EXPECT_NE(s.context.title().find("cuBLAS 13.1.0"), std::string::npos);

  PlotFilter decode;
  decode.m = size_filter("4096", "--m");
  decode.k = size_filter("4096", "--k");
  decode.n = size_filter("1..256", "--n");
  s = select(kGallery, decode);
  EXPECT_EQ(s.points.size(), 256u);
  const SweptAxis axis = swept_axis(s.points, "plot flops");
  EXPECT_EQ(axis.name, "N");
  EXPECT_EQ(axis.label, "N (M = 4096, K = 4096) [elements]");

  PlotFilter grid;
  grid.m = size_filter("256..8192:256", "--m");
  grid.n = size_filter("256..8192:256", "--n");
  grid.k = size_filter("4096", "--k");
  s = select(kGallery, grid);
  EXPECT_EQ(s.points.size(), 1024u);
  const GridAxes axes = grid_axes(s.points, "plot heatmap");
  EXPECT_EQ(axes.x.name, "N");
  EXPECT_EQ(axes.y.name, "M");
  EXPECT_EQ(axes.fixed, "K = 4096");
  EXPECT_THROW(swept_axis(s.points, "plot flops"), Error);
}

TEST(PlotSelect, AllAlgorithmsForCompareAndTheDefaultOtherwise) {
  PlotFilter f;
  f.n = size_filter("64..4096:64", "--n");
  f.backends = {"cublaslt"};
  Selection one = select(kGallery, f);
  for (const StoredPoint& p : one.points) EXPECT_EQ(p.key.algo, "h0");
  Selection all = select(kGallery, f, Algos::kAll);
  EXPECT_EQ(all.points.size(), 64u * 4 - 1);  // h3 was not offered at one size
  f.algos = {"h1", "h2"};
  EXPECT_THROW(select(kGallery, f), Error);
}

// --backend and --algo are read once into lists; given() writes them back as they were given.
TEST(PlotSelect, BackendAndAlgoListsAreReadOnce) {
  PlotFilter f;
  f.backends = comma_list_option("cublas,cublaslt", "--backend");
  EXPECT_EQ(f.backends, (std::vector<std::string>{"cublas", "cublaslt"}));
  f.algos = comma_list_option("default,h0", "--algo");
  EXPECT_EQ(f.given(), "--backend cublas,cublaslt --algo default,h0");
  EXPECT_TRUE(comma_list_option("", "--algo").empty());
  for (const char* bad : {",", "cublas,", ",cublas", "cublas,,cublaslt"}) {
    try {
      comma_list_option(bad, "--backend");
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), fmt::format("--backend: '{}' has an empty item", bad));
    }
  }
}

// A mix that one picture cannot hold is refused with the option to choose with and the values found.
void expect_mix_refused(void (*mix)(StoredPoint&), const std::vector<std::string>& words,
                        void (*rest)(StoredPoint&) = nullptr) {
  const Store store(kSquares, Store::Access::kReadOnly);
  std::vector<StoredPoint> points = store.load_all();
  for (size_t i = 0; i < points.size(); ++i) {
    if (i % 2 == 0) {
      mix(points[i]);
    } else if (rest) {
      rest(points[i]);
    }
  }
  try {
    select_points(points, kSquares, PlotFilter{}, Algos::kOne, "plot flops", store);
    ADD_FAILURE() << "no refusal";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    for (const auto& w : words) EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
  }
}

TEST(PlotSelect, MixesAreRefusedNamingTheOptionAndTheValues) {
  expect_mix_refused([](StoredPoint& p) { p.key.problem.dtype = DType::kFp16; }, {"--dtype", "'bf16', 'fp16'"});
  expect_mix_refused([](StoredPoint& p) { p.key.problem.layout = Layout::kNT; }, {"--layout", "'nn', 'nt'"});
  expect_mix_refused([](StoredPoint& p) { p.device.gpu_name = "NVIDIA H100 80GB HBM3"; },
                     {"--gpu", "'NVIDIA H100 80GB HBM3', 'NVIDIA H200'"});
  expect_mix_refused([](StoredPoint& p) { p.device.cublas = "12.9.1"; }, {"--cublas", "'12.9.1', '13.1.0'"});
  // Two cuBLASLt choices and neither the heuristic's first: nothing to fall back on.
  expect_mix_refused([](StoredPoint& p) {
                       p.key.backend = BackendKind::kCublasLt;
                       p.key.algo = "h1";
                     },
                     {"--algo", "cublaslt h1, cublaslt h2", "compare"},
                     [](StoredPoint& p) {
                       p.key.backend = BackendKind::kCublasLt;
                       p.key.algo = "h2";
                     });
}

// The same key measured twice (a re-run, another machine of the same kind): the newest is drawn.
TEST(PlotSelect, ReMeasuredPointsKeepTheNewest) {
  const Store store(kSquares, Store::Access::kReadOnly);
  std::vector<StoredPoint> points = store.load_all();
  StoredPoint again = points.front();
  again.result.measured_at = "2099-01-01T00:00:00Z";
  again.result.timing.median_us *= 2;
  points.push_back(again);
  const Selection s = select_points(points, kSquares, PlotFilter{}, Algos::kOne, "plot flops", store);
  EXPECT_EQ(s.points.size(), 4096u);
  for (const StoredPoint& p : s.points) {
    if (p.key.problem == again.key.problem) {
      EXPECT_EQ(p.result.measured_at, again.result.measured_at);
    }
  }
  EXPECT_NE(s.context.measured.find("2099-01-01"), std::string::npos);
}

TEST(PlotFigures, TilegridOfHesExampleHasTwoWavesOnAnA100) {
  Problem p;
  p.m = p.n = p.k = p.lda = p.ldb = p.ldc = 1793;
  const Annotation a = predict(p, model_gpu(*find_profile("a100")), 256, 128);
  const Plot plot = tilegrid_plot(p, a, "model");
  // 8 x 15 = 120 tiles, 108 slots: wave 2 holds the last 12 tiles, 96 slots idle.
  EXPECT_EQ(plot.figure.tooltips, 120u + 108u);
  const DataBlock& tiles = plot.figure.blocks.at(0);
  ASSERT_EQ(tiles.rows.size(), 120u);
  size_t second = 0;
  for (const std::string& row : tiles.rows) second += row.find(" 2 \"tile") != std::string::npos;
  EXPECT_EQ(second, 12u);
  size_t idle = 0;
  for (const std::string& row : plot.figure.blocks.at(1).rows) idle += row.find(" 0 \"slot") != std::string::npos;
  EXPECT_EQ(idle, 96u);
  EXPECT_NE(plot.summary.front().find("96 idle"), std::string::npos);
}

struct Expected {
  std::string args;      // after "plot"
  std::string name;      // files NAME.svg ... in the test's directory
  size_t tooltips;       // points with hover text
  uint32_t width, height;
};

void expect_rendered(const Expected& e) {
  const std::string dir = test_dir();
  const CliRun r = run("plot " + e.args + " --out " + dir);
  ASSERT_EQ(r.code, 0) << e.args << "\n" << r.err;
  EXPECT_NE(r.out.find("wrote "), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("gnuplot:"), std::string::npos) << "gnuplot warned: " << r.err;
  const std::string svg = read_text(dir + e.name + ".svg");
  ASSERT_FALSE(svg.empty()) << dir + e.name + ".svg";
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  const size_t end = svg.find_last_not_of(" \n\r\t");
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(svg.substr(end + 1 - 6, 6), "</svg>");
  EXPECT_EQ(xml_problem(svg), "") << e.name;
  // One hover text per plotted point, nothing more (gnuplot: a <g> calling showHypertext each).
  EXPECT_EQ(count_of(svg, "gnuplot_svg.showHypertext(evt,"), e.tooltips) << e.args;
  EXPECT_EQ(png_size(dir + e.name + ".png"), std::make_pair(e.width, e.height)) << e.args;
  const std::string script = read_text(dir + e.name + ".gp");
  EXPECT_NE(script.find("DATA = NAME.'.dat'"), std::string::npos);
  EXPECT_NE(script.find("shapescope plot " + e.args.substr(0, e.args.find(' '))), std::string::npos);
  const std::string data = read_text(dir + e.name + ".dat");
  EXPECT_EQ(data.rfind("# shapescope plot", 0), 0u);
  fs::remove_all(dir);
}

class PlotRender : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_gnuplot()) GTEST_SKIP() << "gnuplot is not on PATH (apt-get install gnuplot-nox)";
  }
};

TEST_F(PlotRender, FlopsOfTheSquareSweep) {
  expect_rendered({"flops --db " + kSquares, "flops", 4096, 1000, 600});
}

TEST_F(PlotRender, RuntimeOfTheSquareSweep) {
  expect_rendered({"runtime --db " + kSquares + " --n 1..4096", "runtime", 4096, 1000, 600});
}

TEST_F(PlotRender, WavesOfTheSquareSweep) {
  expect_rendered({"waves --db " + kSquares, "waves", 4096, 1000, 800});
}

TEST_F(PlotRender, WavesOfOneKernel) {
  // Only the sizes that ran cuBLAS's align1 fallback (odd n from 1153 on).
  const Selection s = [] {
    PlotFilter f;
    f.kernel = "cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128";
    return select(kSquares, f);
  }();
  expect_rendered({"waves --db " + kSquares + " --kernel cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128", "waves",
                   s.points.size(), 1000, 800});
}

TEST_F(PlotRender, KernelsOfTheSquareSweep) {
  expect_rendered({"kernels --db " + kSquares, "kernels", 4096, 1000, 600});
}

TEST_F(PlotRender, CompareBackendsAndAlgorithms) {
  // cublas default, cublaslt h0, and the best of h0..h3: 64 sizes each.
  expect_rendered({"compare --db " + kGallery + " --n 64..4096:64 --backend cublas,cublaslt", "compare", 3 * 64, 1000,
                   600});
}

TEST_F(PlotRender, CompareEachAlgorithmOfTheExplainStore) {
  // h0 and h1 of cuBLASLt at the ten sizes explain measured around 4095.
  expect_rendered({"compare --db " + kExplain + " --n 3584..4096 --backend cublaslt --algo h0,h1", "compare", 2 * 10,
                   1000, 600});
}

TEST_F(PlotRender, HeatmapOfTheGrid) {
  expect_rendered({"heatmap --db " + kGallery + " --m 256..8192:256 --n 256..8192:256 --k 4096", "heatmap", 1024,
                   1000, 800});
}

TEST_F(PlotRender, TilegridOfAStoredShape) {
  // 1793 ran a 128x256 tile (15 x 8 = 120 tiles) on 132 slots: tiles plus the last wave's slots.
  expect_rendered({"tilegrid 1793 --db " + kExplain, "tilegrid-1793", 120 + 132, 1000, 800});
}

TEST_F(PlotRender, TilegridOfADecodeShape) {
  expect_rendered({"tilegrid 4096x1x4096 --db " + kExplain, "tilegrid-4096x1x4096", 64 + 128, 1000, 800});
}

TEST_F(PlotRender, TilegridFromTheModel) {
  expect_rendered({"tilegrid 1793 --gpu a100 --tile 256x128", "tilegrid-1793-a100", 120 + 108, 1000, 800});
}

TEST_F(PlotRender, RooflineWithPeaksFromAnotherStore) {
  PlotFilter all;
  const size_t points = select(kGallery, all).points.size();
  expect_rendered({"roofline --db " + kGallery + " --calibration " + kExplain, "roofline", points, 1000, 600});
}

TEST_F(PlotRender, FlopsOfTheExplainStore) {
  expect_rendered({"flops --db " + kExplain + " --m 4096 --k 4096 --n 1..4096", "flops", 18, 1000, 600});
}

TEST_F(PlotRender, ScriptRendersAgainWithGnuplotAlone) {
  const std::string dir = test_dir();
  ASSERT_EQ(run("plot tilegrid 1793 --gpu a100 --tile 256x128 --out " + dir + "fig").code, 0);
  fs::remove(dir + "fig.svg");
  fs::remove(dir + "fig.png");
  const std::string cmd = "cd " + dir + " && gnuplot fig.gp 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_EQ(png_size(dir + "fig.png"), std::make_pair(1000u, 800u));
  EXPECT_EQ(count_of(read_text(dir + "fig.svg"), "gnuplot_svg.showHypertext(evt,"), 228u);
  fs::remove_all(dir);
}

TEST_F(PlotRender, GnuplotErrorsAreOneLineWithTheScript) {
  // A template with a typo, as a restyled one might have.
  const std::string dir = test_dir();
  fs::create_directories(dir + "templates");
  std::ofstream(dir + "templates/flops.gp") << "set output NAME.'.svg'\nplot DATA index 0 using 1:2 with pointz\n";
  expect_refused("flops --db " + kSquares + " --n 1..64 --out " + dir + " --templates " + dir + "templates",
                 ExitCode::kInternal, {"gnuplot failed", dir + "flops.gp"});
  EXPECT_FALSE(fs::exists(dir + "flops.gp"));
  expect_refused("flops --db " + kSquares + " --out " + dir + " --templates " + dir + "missing", ExitCode::kUsage,
                 {"--templates", dir + "missing", "flops.gp"});
  fs::remove_all(dir);
}

TEST_F(PlotRender, TinySelectionsStillDraw) {
  // One size, and the sizes below 8 whose gemv-style kernels have no tile.
  expect_rendered({"flops --db " + kSquares + " --n 1", "flops", 1, 1000, 600});
  expect_rendered({"runtime --db " + kSquares + " --n 1", "runtime", 1, 1000, 600});
  expect_rendered({"kernels --db " + kSquares + " --n 1..7", "kernels", 7, 1000, 600});
  expect_refused("waves --db " + kSquares + " --n 1 --out " + test_dir(), ExitCode::kUsage, {"plot waves", "no wave"});
}

TEST(PlotCli, HelpHasExamples) {
  const CliRun r = run("plot --help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("Examples:"), std::string::npos);
  EXPECT_NE(r.out.find("tilegrid 1793 --gpu a100 --tile 256x128"), std::string::npos);
}

TEST(PlotCli, EmptySelectionIsOneLine) {
  const std::string out = " --out " + test_dir();
  expect_refused("flops --db " + kSquares + " --dtype fp16" + out, ExitCode::kUsage,
                 {"plot flops: no point in '" + kSquares + "' matches --dtype fp16", "bf16"});
  expect_refused("runtime --db " + kSquares + " --n 5000..6000" + out, ExitCode::kUsage, {"no point", "--n 5000..6000"});
  expect_refused("flops --db " + kSquares + " --kernel no_such_kernel" + out, ExitCode::kUsage,
                 {"no point", "--kernel no_such_kernel"});
  expect_refused("tilegrid 5000 --db " + kExplain + out, ExitCode::kUsage, {"SHAPE", "5000", "--tile"});
}

TEST(PlotCli, BadOptionsNameTheOptionAndValue) {
  const std::string db = " --db " + kSquares;
  expect_refused("bogus" + db, ExitCode::kUsage, {"KIND", "bogus", "flops"});
  expect_refused("flops" + db + " --dtype bf8", ExitCode::kUsage, {"--dtype", "bf8"});
  expect_refused("flops" + db + " --layout xy", ExitCode::kUsage, {"--layout", "xy"});
  expect_refused("flops" + db + " --n 4096..1", ExitCode::kUsage, {"--n", "4096..1"});
  expect_refused("flops" + db + " --m 1..x", ExitCode::kUsage, {"--m", "1..x"});
  expect_refused("flops" + db + " --backend cutlass", ExitCode::kUsage, {"--backend", "cutlass", "cublas"});
  expect_refused("flops" + db + " --backend ,cublas", ExitCode::kUsage, {"--backend", "empty"});
  expect_refused("flops" + db + " --algo h9", ExitCode::kUsage, {"--algo", "h9"});
  expect_refused("flops" + db + " --gpu a100", ExitCode::kUsage, {"--gpu", "a100", "NVIDIA H200"});
  expect_refused("flops" + db + " --cublas 12", ExitCode::kUsage, {"--cublas", "12", "13.1.0"});
  expect_refused("flops" + db + " --ld-pad -1", ExitCode::kUsage, {"--ld-pad", "-1"});
  expect_refused("flops" + db + " --offset -2", ExitCode::kUsage, {"--offset", "-2"});
  expect_refused("flops 1793" + db, ExitCode::kUsage, {"SHAPE", "1793", "tilegrid"});
  expect_refused("flops" + db + " --tile 256x128", ExitCode::kUsage, {"--tile", "tilegrid"});
  expect_refused("tilegrid" + db, ExitCode::kUsage, {"SHAPE"});
  expect_refused("tilegrid 17x" + db, ExitCode::kUsage, {"SHAPE", "17x"});
  // Too large for cuBLAS: named as the SHAPE the user gave, not as the --m it becomes.
  expect_refused("tilegrid 99999999999 --gpu a100 --tile 256x128", ExitCode::kUsage,
                 {"SHAPE: '99999999999' has a size above 2147483647"});
  expect_refused("tilegrid 64x64x99999999999" + db, ExitCode::kUsage, {"SHAPE: '64x64x99999999999'"});
  expect_refused("tilegrid 1793 --tile 256x128", ExitCode::kUsage, {"--tile", "--gpu"});
  expect_refused("tilegrid 1793 --gpu foo --tile 256x128", ExitCode::kUsage, {"--gpu", "foo", "a100"});
  expect_refused("tilegrid 1793 --gpu a100 --tile 256", ExitCode::kUsage, {"--tile", "256"});
  expect_refused("tilegrid 1793 --n 5" + db, ExitCode::kUsage, {"--n", "SHAPE"});
  expect_refused("flops" + db + " --out /nonexistent-dir/x", ExitCode::kUsage, {"--out", "/nonexistent-dir"});
  expect_refused("flops" + db + " --bogus", ExitCode::kUsage, {"--bogus"});
}

TEST(PlotCli, MixedSelectionsNameTheOptionToChooseWith) {
  const std::string out = " --out " + test_dir();
  // gallery.db holds three sweeps: squares, a grid at K = 4096 and decode shapes.
  expect_refused("flops --db " + kGallery + out, ExitCode::kUsage, {"--m/--n/--k", "M (", "N (", "heatmap"});
  expect_refused("heatmap --db " + kSquares + out, ExitCode::kUsage, {"--m/--n/--k", "two sizes"});
  expect_refused("flops --db " + kGallery + " --n 64..4096:64 --backend cublaslt --algo h1,h2" + out, ExitCode::kUsage,
                 {"--algo", "h1", "h2", "compare"});
  expect_refused("compare --db " + kSquares + out, ExitCode::kUsage, {"--backend", "two series"});
  expect_refused("roofline --db " + kGallery + " --calibration " + kSquares + out, ExitCode::kUsage,
                 {"--calibration", "no calibration"});
}

TEST(PlotCli, MissingGnuplotHasItsOwnExitCodeWithThePackage) {
  const std::string dir = test_dir();
  expect_refused("flops --db " + kSquares + " --out " + dir + " --gnuplot /nonexistent/gnuplot", ExitCode::kNoGnuplot,
                 {"gnuplot", "apt-get install gnuplot-nox"});
  // Not on PATH: the same, and nothing is written (a failing command leaves the folder as it was).
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  setenv("PATH", "/nonexistent", 1);
  const CliRun r = run("plot flops --db " + kSquares + " --out " + dir);
  setenv("PATH", path.c_str(), 1);
  EXPECT_EQ(r.code, int(ExitCode::kNoGnuplot)) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("apt-get install gnuplot-nox"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "flops.gp"));
  EXPECT_FALSE(fs::exists(dir + "flops.dat"));
  EXPECT_FALSE(fs::exists(dir + "flops.svg"));
  fs::remove_all(dir);
}

TEST(PlotCli, StoreProblemsAreExitFive) {
  expect_refused("flops --db /nonexistent-dir/none.db", ExitCode::kStore, {"/nonexistent-dir/none.db"});
}

}  // namespace
}  // namespace shapescope
