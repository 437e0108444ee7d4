// The layering of docs/ARCHITECTURE.md, checked: every `#include "..."` under src/ and kernels/ may
// name only its own layer or one its row of kMayInclude lists, so that a layer never learns the types
// of a layer it does not build on. The table is the real graph, and it agrees with the CMake
// libraries: an include never reaches a library above its own (CMakeLists.txt lists each library's
// layers; the test reads those lists). A failure names the file, the line and both layers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// Which layers each layer may include besides itself. common/ (errors, the clock, outputs, units) is
// below everything; model/ is pure C++ and gets our kernels' tiles passed in; store/ knows no model
// type; kernels/ (our CUDA kernels and their registry) runs below the backend that launches them.
const std::map<std::string, std::set<std::string>> kMayInclude = {
    {"common", {}},
    {"core", {"common"}},
    {"shape", {"common", "core"}},
    {"model", {"common", "core"}},
    {"store", {"common", "core"}},
    {"device", {"common", "core"}},
    {"kernels", {"common", "core"}},
    {"backends", {"common", "core", "kernels"}},
    {"timing", {"common", "core", "device", "backends"}},
    {"trace", {"common", "core", "backends"}},
    {"measure", {"common", "core", "shape", "device", "backends", "timing", "trace", "store"}},
    {"views", {"common", "core", "shape", "model", "store", "kernels", "backends", "timing", "measure"}},
    {"report", {"common", "core", "model", "store", "timing", "measure", "views"}},
    {"cli", {"common", "core", "shape", "model", "store", "device", "kernels", "backends", "timing", "trace", "measure",
             "views", "report"}},
};

// The libraries from the bottom, with their layers as CMakeLists.txt builds them; the commands (cli/,
// main.cpp) are the executable.
const std::vector<std::pair<std::string, std::set<std::string>>> kLibraries = {
    {"shapescope_core", {"common", "core", "shape", "model", "store"}},
    {"shapescope_gpu", {"device", "kernels", "backends", "timing", "trace", "measure"}},
    {"shapescope_app", {"views", "report"}},
    {"shapescope", {"cli"}},
};

bool known_layer(const std::string& folder) { return kMayInclude.count(folder) > 0; }

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

std::string folders_text(const std::set<std::string>& folders) {
  std::string text;
  for (const std::string& f : folders) text += (text.empty() ? "" : ", ") + f + "/";
  return text.empty() ? "nothing" : text;
}

}  // namespace

// Every include that runs against the table, as "file:line: ..." lines; empty when the layering holds.
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
    if (!known_layer(from)) {
      found.push_back(relative.string() + ": folder '" + from + "' is in no layer (add it to the table in " +
                      "tests/cpu/test_layering.cpp, to a library in CMakeLists.txt and to docs/ARCHITECTURE.md)");
      continue;
    }
    const std::set<std::string>& allowed = kMayInclude.at(from);
    std::ifstream in(file);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      std::smatch match;
      if (!std::regex_search(line, match, kInclude)) continue;
      const std::string target = match[1];
      const auto slash = target.find('/');
      // A bare name is a file of the same folder.
      const std::string to = slash == std::string::npos ? from : target.substr(0, slash);
      const std::string where = relative.string() + ":" + std::to_string(number) + ": #include \"" + target + "\": ";
      if (!known_layer(to)) {
        found.push_back(where + "'" + to + "' is in no layer");
      } else if (to != from && !allowed.count(to)) {
        found.push_back(where + from + "/ may include only " + folders_text(allowed) + " (tests/cpu/test_layering.cpp)");
      }
    }
  }
  return found;
}

// The table against the libraries: every layer in one library, no include reaching a library above its
// own, and no cycle (a layer reaching itself through others).
std::vector<std::string> table_violations(const std::map<std::string, std::set<std::string>>& may_include,
                                          const std::vector<std::pair<std::string, std::set<std::string>>>& libraries) {
  std::vector<std::string> bad;
  std::map<std::string, size_t> rank;
  for (size_t i = 0; i < libraries.size(); ++i)
    for (const std::string& layer : libraries[i].second)
      if (!rank.emplace(layer, i).second) bad.push_back(layer + "/ is in two libraries");
  for (const auto& [layer, targets] : may_include) {
    if (!rank.count(layer)) {
      bad.push_back(layer + "/ is in no library");
      continue;
    }
    for (const std::string& to : targets)
      if (rank.count(to) && rank.at(to) > rank.at(layer))
        bad.push_back(layer + "/ (" + libraries[rank.at(layer)].first + ") may include " + to + "/ of " +
                      libraries[rank.at(to)].first + ", a library above it");
  }
  // A cycle: some layer reaches itself.
  std::function<bool(const std::string&, const std::string&, std::set<std::string>&)> reaches =
      [&](const std::string& from, const std::string& goal, std::set<std::string>& seen) {
        if (!may_include.count(from)) return false;
        for (const std::string& to : may_include.at(from)) {
          if (to == goal) return true;
          if (seen.insert(to).second && reaches(to, goal, seen)) return true;
        }
        return false;
      };
  for (const auto& entry : may_include) {
    std::set<std::string> seen;
    if (reaches(entry.first, entry.first, seen)) bad.push_back(entry.first + "/ reaches itself through the layers it includes");
  }
  return bad;
}

// The layers of each library as CMakeLists.txt lists them: "set(shapescope_core_layers common core ...)".
std::map<std::string, std::set<std::string>> cmake_libraries(const fs::path& cmake_lists) {
  std::ifstream in(cmake_lists);
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  static const std::regex kList(R"(set\((shapescope_\w+)_layers\s+([^)]*)\))");
  std::map<std::string, std::set<std::string>> libraries;
  for (auto it = std::sregex_iterator(all.begin(), all.end(), kList); it != std::sregex_iterator(); ++it) {
    std::istringstream layers((*it)[2].str());
    for (std::string layer; layers >> layer;) libraries[(*it)[1].str()].insert(layer);
  }
  return libraries;
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

TEST(Layering, EveryIncludeIsOneTheTableAllows) {
  const std::vector<std::string> bad = layering_violations(fs::path(SHAPESCOPE_TEST_DATA) / ".." / "..");
  EXPECT_TRUE(bad.empty()) << "includes the layer table does not allow (docs/ARCHITECTURE.md):\n" << joined(bad);
}

TEST(Layering, TheTableAgreesWithTheLibraries) {
  const std::vector<std::string> bad = table_violations(kMayInclude, kLibraries);
  EXPECT_TRUE(bad.empty()) << joined(bad);
  // CMakeLists.txt builds the same libraries from the same layers (the executable is cli/ alone).
  const auto cmake = cmake_libraries(fs::path(SHAPESCOPE_TEST_DATA) / ".." / ".." / "CMakeLists.txt");
  std::map<std::string, std::set<std::string>> expected;
  for (const auto& [library, layers] : kLibraries)
    if (library != "shapescope") expected[library] = layers;
  EXPECT_EQ(cmake, expected);
}

// The checks themselves: a planted include that the table does not allow is reported with its file and
// line; one it allows is not. A table that lets a library reach up, or goes round in a circle, is refused.
TEST(Layering, ReportsAnIncludeTheTableForbids) {
  const fs::path root = fs::path(::testing::TempDir()) / ("shapescope_layering_" + std::to_string(::getpid()));
  fs::remove_all(root);
  write(root / "src/store/store.hpp", "#pragma once\n#include \"core/records.hpp\"\n#include \"model/annotate.hpp\"\n");
  write(root / "src/model/annotate.hpp", "#pragma once\n#include \"kernels/registry.hpp\"\n#include <vector>\n");
  write(root / "src/cli/sweep.cpp", "#include \"measure/measure.hpp\"\n#include \"local.hpp\"\n");
  write(root / "src/gadgets/x.cpp", "#include \"core/records.hpp\"\n");
  const std::vector<std::string> bad = layering_violations(root);
  ASSERT_EQ(bad.size(), 3u) << joined(bad);
  EXPECT_EQ(bad[0], "src/gadgets/x.cpp: folder 'gadgets' is in no layer (add it to the table in "
                    "tests/cpu/test_layering.cpp, to a library in CMakeLists.txt and to docs/ARCHITECTURE.md)");
  EXPECT_EQ(bad[1], "src/model/annotate.hpp:2: #include \"kernels/registry.hpp\": model/ may include only common/, "
                    "core/ (tests/cpu/test_layering.cpp)");
  EXPECT_EQ(bad[2], "src/store/store.hpp:3: #include \"model/annotate.hpp\": store/ may include only common/, core/ "
                    "(tests/cpu/test_layering.cpp)");
  fs::remove_all(root);

  const std::vector<std::pair<std::string, std::set<std::string>>> libraries = {{"low", {"a", "b"}}, {"high", {"c"}}};
  EXPECT_EQ(table_violations({{"a", {}}, {"b", {"a"}}, {"c", {"a", "b"}}}, libraries), std::vector<std::string>{});
  EXPECT_EQ(table_violations({{"a", {"c"}}, {"b", {}}, {"c", {}}}, libraries),
            std::vector<std::string>{"a/ (low) may include c/ of high, a library above it"});
  EXPECT_EQ(table_violations({{"a", {"b"}}, {"b", {"a"}}, {"c", {}}}, libraries),
            (std::vector<std::string>{"a/ reaches itself through the layers it includes",
                                      "b/ reaches itself through the layers it includes"}));
  EXPECT_EQ(table_violations({{"a", {}}, {"b", {}}, {"c", {}}, {"d", {}}}, libraries),
            std::vector<std::string>{"d/ is in no library"});
}

// Sizes that keep the code readable: a source file under src/ or kernels/ (a kernel's headers
// included) holds one concern (<= 600 lines); a file under src/cli/ parses options and calls one
// view and one report, or holds options several commands share (<= 250 lines); a function at file
// scope fits a screen and a half (<= 80 lines). A function is a line at column 0 that opens a brace
// after a signature, up to the line that starts with its closing brace. Generated tables are exempt
// by name.
std::vector<std::string> size_violations(const fs::path& root) {
  const std::set<std::string> generated = {"src/backends/lt_names.cpp"};
  std::vector<fs::path> files;
  for (const char* top : {"src", "kernels"}) {
    if (!fs::exists(root / top)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / top))
      if (entry.is_regular_file() && is_source(entry.path())) files.push_back(entry.path());
  }
  std::vector<std::string> bad;
  for (const fs::path& file : files) {
    const std::string relative = fs::relative(file, root).generic_string();
    if (generated.count(relative)) continue;
    std::vector<std::string> lines;
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    if (lines.size() > 600)
      bad.push_back(relative + ": " + std::to_string(lines.size()) + " lines (a source file: at most 600)");
    if (file.extension() != ".cpp") continue;
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
  // A kernel's header is held to the same cap.
  write(root / "kernels/06_big.cuh", std::string(601, '\n'));
  write(root / "kernels/06_big_host.cuh", std::string(600, '\n'));
  const std::vector<std::string> bad = size_violations(root);
  ASSERT_EQ(bad.size(), 5u) << joined(bad);
  EXPECT_EQ(bad[0], "kernels/06_big.cuh: 601 lines (a source file: at most 600)");
  EXPECT_EQ(bad[1], "src/cli/big.cpp: 251 lines (a command file: at most 250)");
  EXPECT_EQ(bad[2].rfind("src/model/long.cpp:1: int long_one(int x) {... is 88 lines", 0), 0u) << bad[2];
  EXPECT_EQ(bad[3], "src/store/big.hpp: 601 lines (a source file: at most 600)");
  EXPECT_EQ(bad[4].rfind("src/views/two.cpp:8: int two_lines(int a,... is 89 lines", 0), 0u) << bad[4];
  fs::remove_all(root);
}

}  // namespace
