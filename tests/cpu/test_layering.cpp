// The layering of docs/ARCHITECTURE.md, checked: every `#include "..."` under src/ and kernels/ may
// name only its own layer or a layer below it, so that dependencies point down the list and a
// lower layer never learns a higher one's types. A failure names the file, the line and both layers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// From the bottom. common/ (error and CUDA-check helpers) is below everything. kernels/ (our CUDA
// kernels and their registry) sits above device/ and below backends/: the custom backend runs
// them, and they know nothing of timing, storage or views.
const std::vector<std::string> kLayers = {"common", "core",    "shape", "device", "kernels", "backends", "timing",
                                          "trace",  "store",   "measure", "model", "views",  "report",   "cli"};

// model/ is pure C++ (no GPU, no CUDA headers) and gets our kernels' tiles passed in: it may include
// only these, although the order alone would let it reach device/, kernels/ or the GPU layers.
const std::set<std::string> kModelMayInclude = {"common", "core", "shape", "model"};

int layer_of(const std::string& folder) {
  const auto at = std::find(kLayers.begin(), kLayers.end(), folder);
  return at == kLayers.end() ? -1 : int(at - kLayers.begin());
}

// The layer folder of a file under root: "src/model/x.cpp" -> "model", "kernels/01.cuh" -> "kernels".
// src/main.cpp belongs with the commands.
std::string folder_of(const fs::path& relative) {
  auto part = relative.begin();
  if (part == relative.end()) return "";
  if (*part == "kernels") return "kernels";
  if (*part != "src") return "";
  ++part;
  if (part == relative.end()) return "";
  if (*part == "main.cpp") return "cli";
  return part->string();
}

bool is_source(const fs::path& path) {
  static const std::set<std::string> kExtensions = {".hpp", ".cpp", ".h", ".cu", ".cuh"};
  return kExtensions.count(path.extension().string()) > 0;
}

}  // namespace

// Every include that runs against the flow, as "file:line: ..." lines; empty when the layering holds.
std::vector<std::string> layering_violations(const fs::path& root) {
  static const std::regex kInclude(R"(^\s*#\s*include\s*"([^"]+)\")");
  std::vector<std::string> found;
  std::vector<fs::path> files;
  for (const char* top : {"src", "kernels"}) {
    if (!fs::exists(root / top)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / top))
      if (entry.is_regular_file() && is_source(entry.path())) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    const fs::path relative = fs::relative(fs::canonical(file), fs::canonical(root));
    const std::string from = folder_of(relative);
    const int from_layer = layer_of(from);
    if (from_layer < 0) {
      found.push_back(relative.string() + ": folder '" + from + "' is in no layer (add it to the list in " +
                      "tests/cpu/test_layering.cpp and docs/ARCHITECTURE.md)");
      continue;
    }
    std::ifstream in(file);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      std::smatch match;
      if (!std::regex_search(line, match, kInclude)) continue;
      const std::string target = match[1];
      const auto slash = target.find('/');
      // A bare name is a file of the same folder.
      const std::string to = slash == std::string::npos ? from : target.substr(0, slash);
      const int to_layer = layer_of(to);
      const std::string where = relative.string() + ":" + std::to_string(number) + ": #include \"" + target + "\": ";
      if (to_layer < 0) {
        found.push_back(where + "'" + to + "' is in no layer");
      } else if (to_layer > from_layer) {
        found.push_back(where + from + "/ (layer " + std::to_string(from_layer) + ") includes " + to + "/ (layer " +
                        std::to_string(to_layer) + "), a higher layer");
      } else if (from == "model" && !kModelMayInclude.count(to)) {
        found.push_back(where + "model/ is pure C++ and may include only common/, core/, shape/ and model/");
      }
    }
  }
  return found;
}

namespace {

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  return text;
}

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(Layering, EveryIncludePointsDown) {
  const std::vector<std::string> bad = layering_violations(fs::path(SHAPESCOPE_TEST_DATA) / ".." / "..");
  EXPECT_TRUE(bad.empty()) << "includes against the layer order (docs/ARCHITECTURE.md):\n" << joined(bad);
}

// The check itself: a planted include from a lower layer to a higher one is reported with its file
// and line; one to a lower layer is not.
TEST(Layering, ReportsAnUpwardInclude) {
  const fs::path root = fs::path(::testing::TempDir()) / ("shapescope_layering_" + std::to_string(::getpid()));
  fs::remove_all(root);
  write(root / "src/store/store.hpp", "#pragma once\n#include \"core/records.hpp\"\n#include \"model/annotate.hpp\"\n");
  write(root / "src/model/annotate.hpp", "#pragma once\n#include \"kernels/registry.hpp\"\n#include <vector>\n");
  write(root / "src/cli/sweep.cpp", "#include \"measure/measure.hpp\"\n#include \"local.hpp\"\n");
  write(root / "src/gadgets/x.cpp", "#include \"core/records.hpp\"\n");
  const std::vector<std::string> bad = layering_violations(root);
  ASSERT_EQ(bad.size(), 3u) << joined(bad);
  EXPECT_EQ(bad[0], "src/gadgets/x.cpp: folder 'gadgets' is in no layer (add it to the list in "
                    "tests/cpu/test_layering.cpp and docs/ARCHITECTURE.md)");
  EXPECT_EQ(bad[1], "src/model/annotate.hpp:2: #include \"kernels/registry.hpp\": model/ is pure C++ and may "
                    "include only common/, core/, shape/ and model/");
  EXPECT_EQ(bad[2], "src/store/store.hpp:3: #include \"model/annotate.hpp\": store/ (layer 8) includes model/ "
                    "(layer 10), a higher layer");
  fs::remove_all(root);
}

// Sizes that keep the code readable: a source file under src/ holds one concern (<= 600 lines); a
// file under src/cli/ parses options and calls one view and one report, or holds options several
// commands share (<= 250 lines); a function at file scope fits a screen and a half (<= 80 lines). A
// function is a line at column 0 that opens a brace after a signature, up to the line that starts
// with its closing brace. Generated tables are exempt by name.
std::vector<std::string> size_violations(const fs::path& root) {
  const std::set<std::string> generated = {"src/backends/lt_names.cpp"};
  std::vector<std::string> bad;
  for (const auto& entry : fs::recursive_directory_iterator(root / "src")) {
    if (!entry.is_regular_file() || !is_source(entry.path())) continue;
    const std::string relative = fs::relative(entry.path(), root).generic_string();
    if (generated.count(relative)) continue;
    std::vector<std::string> lines;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    if (lines.size() > 600)
      bad.push_back(relative + ": " + std::to_string(lines.size()) + " lines (a source file: at most 600)");
    if (entry.path().extension() != ".cpp") continue;
    if (relative.rfind("src/cli/", 0) == 0 && lines.size() > 250)
      bad.push_back(relative + ": " + std::to_string(lines.size()) + " lines (a command file: at most 250)");
    static const std::regex opener(R"(\)( const)?( override)? \{$)");
    static const std::regex not_function(R"(^(namespace|struct|class|enum|union|extern|if|for|while|switch)\b)");
    for (size_t i = 0; i < lines.size(); ++i) {
      if (!std::regex_search(lines[i], opener)) continue;
      // A signature over several lines starts at the last line at column 0 before the brace.
      size_t start = i;
      while (start > 0 && start + 4 > i && !lines[start].empty() && std::isspace(static_cast<unsigned char>(lines[start][0])))
        --start;
      if (lines[start].empty() || !std::isalpha(static_cast<unsigned char>(lines[start][0])) ||
          std::regex_search(lines[start], not_function) || lines[start].back() == ';')
        continue;
      size_t end = i + 1;
      while (end < lines.size() && lines[end].rfind("}", 0) != 0) ++end;
      if (end - start + 1 > 80)
        bad.push_back(relative + ":" + std::to_string(start + 1) + ": " + lines[start].substr(0, 60) + "... is " +
                      std::to_string(end - start + 1) + " lines (at most 80)");
      i = end;
    }
  }
  std::sort(bad.begin(), bad.end());
  return bad;
}

TEST(Layering, FilesAndFunctionsFitTheirSize) {
  const std::vector<std::string> bad = size_violations(fs::path(SHAPESCOPE_TEST_DATA) / ".." / "..");
  EXPECT_TRUE(bad.empty()) << joined(bad);
}

TEST(Layering, ReportsALongFunctionALongCommandAndALongFile) {
  const fs::path root = fs::path(::testing::TempDir()) / ("shapescope_sizes_" + std::to_string(::getpid()));
  fs::remove_all(root);
  std::string body = "int long_one(int x) {\n";
  for (int i = 0; i < 85; ++i) body += "  x += " + std::to_string(i) + ";\n";
  body += "  return x;\n}\n";
  write(root / "src/model/long.cpp", body);
  // A signature over two lines, and a short function whose inner blocks end in ") {" too.
  std::string two = "int short_one(int x) {\n  if (x) {\n    ++x;\n  }\n  return x;\n}\n\nint two_lines(int a,\n              int b) {\n";
  for (int i = 0; i < 85; ++i) two += "  a += b;\n";
  two += "  return a;\n}\n";
  write(root / "src/views/two.cpp", two);
  write(root / "src/cli/big.cpp", std::string(251, '\n'));
  // 601 lines of a header or a source file: over the cap; a generated table is exempt.
  write(root / "src/store/big.hpp", std::string(601, '\n'));
  write(root / "src/report/fits.cpp", std::string(600, '\n'));
  write(root / "src/backends/lt_names.cpp", std::string(900, '\n'));
  const std::vector<std::string> bad = size_violations(root);
  ASSERT_EQ(bad.size(), 4u) << joined(bad);
  EXPECT_EQ(bad[0], "src/cli/big.cpp: 251 lines (a command file: at most 250)");
  EXPECT_EQ(bad[1].rfind("src/model/long.cpp:1: int long_one(int x) {... is 88 lines", 0), 0u) << bad[1];
  EXPECT_EQ(bad[2], "src/store/big.hpp: 601 lines (a source file: at most 600)");
  EXPECT_EQ(bad[3].rfind("src/views/two.cpp:8: int two_lines(int a,... is 89 lines", 0), 0u) << bad[3];
  fs::remove_all(root);
}

}  // namespace
