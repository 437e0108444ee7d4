// tests/data holds only fixtures that a test reads: every file under it, at any depth, must be named
// by one file under tests/ outside tests/data, or by CMakeLists.txt (which passes tests their paths),
// that also names each folder above it: `kData + "/h200-2026-11-21-final/pad.db"`, or
// `DATA / "gemms" / "jax-step.json"`. A test that builds a file's name from its stem names the stem
// as a whole string literal ("gpt2-vocab50264" for traces/gpt2-vocab50264.json). Measurements that
// no test reads belong to bench/<topic>/results/ with the script that made them (bench/README.md).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The texts of the files that can name a fixture, one per file: everything under tests/ but
// tests/data and this file (whose planted names are not fixtures), and CMakeLists.txt.
std::vector<std::string> referring_texts(const fs::path& root) {
  std::vector<std::string> texts = {read_text(root / "CMakeLists.txt")};
  const fs::path data = root / "tests" / "data";
  for (auto it = fs::recursive_directory_iterator(root / "tests"); it != fs::recursive_directory_iterator(); ++it) {
    if (it->path() == data) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && it->path().filename() != "test_fixtures.cpp") texts.push_back(read_text(it->path()));
  }
  return texts;
}

// `name` as a path component: after '/' or a quote, and before a character that cannot continue a
// file name in a path ('/', a quote, a space, the end of a line or of the text, '`', ')'). So a
// folder "gpu-2026" is not named by "/gpu-2026-final/", nor a file "log.txt" by "/log.txt.gz".
bool names_component(const std::string& text, const std::string& name) {
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    if (at == 0 || (text[at - 1] != '/' && text[at - 1] != '"' && text[at - 1] != '\'')) continue;
    const size_t end = at + name.size();
    if (end == text.size()) return true;
    const char next = text[end];
    if (next == '/' || next == '"' || next == '\'' || next == ' ' || next == '\n' || next == '`' || next == ')')
      return true;
  }
  return false;
}

// `stem` as a whole string literal: "stem" or 'stem'.
bool names_literal(const std::string& text, const std::string& stem) {
  return text.find('"' + stem + '"') != std::string::npos || text.find('\'' + stem + '\'') != std::string::npos;
}

// Whether one referring text names the file at `relative` (to tests/data): each of its folders, and
// its name or its stem (the name up to its first '.').
bool is_read(const std::vector<std::string>& texts, const fs::path& relative) {
  const std::string name = relative.filename().string();
  const std::string stem = name.substr(0, name.find('.'));
  return std::any_of(texts.begin(), texts.end(), [&](const std::string& text) {
    for (const fs::path& folder : relative.parent_path())
      if (!names_component(text, folder.string())) return false;
    return names_component(text, name) || (!stem.empty() && names_literal(text, stem));
  });
}

// The files under root/tests/data, at any depth, that no test names: paths relative to tests/data,
// sorted.
std::vector<std::string> unread_fixtures(const fs::path& root) {
  const std::vector<std::string> texts = referring_texts(root);
  const fs::path data = root / "tests" / "data";
  std::vector<std::string> unread;
  for (const auto& entry : fs::recursive_directory_iterator(data)) {
    if (!entry.is_regular_file()) continue;
    const fs::path relative = fs::relative(entry.path(), data);
    if (!is_read(texts, relative)) unread.push_back(relative.generic_string());
  }
  std::sort(unread.begin(), unread.end());
  return unread;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += "  tests/data/" + n + "\n";
  return text;
}

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

}  // namespace

TEST(Fixtures, EveryTestDataEntryIsReadByATest) {
  const std::vector<std::string> unread = unread_fixtures(fs::path(SHAPESCOPE_TEST_DATA) / ".." / "..");
  EXPECT_TRUE(unread.empty()) << "read by no test (move measurements to bench/<topic>/results/, see bench/README.md):\n"
                              << joined(unread);
}

// The check itself, on a planted tree: files named with their folders in one test, by a stem
// literal, or through CMakeLists.txt are read; a file of a folder named only as a prefix of another's
// name, a file next to a read one, a file whose name and folder are named by two different tests, a
// file deeper than the folder a test names, a file named only in tests/data itself and a top-level
// file named nowhere are reported.
TEST(Fixtures, ReportsAnEntryNoTestReads) {
  const fs::path root = fs::path(::testing::TempDir()) / ("shapescope_fixtures_" + std::to_string(::getpid()));
  fs::remove_all(root);
  write(root / "CMakeLists.txt", "add_test(NAME s COMMAND run.sh ${CMAKE_CURRENT_SOURCE_DIR}/tests/data/slurm/shard.db)\n");
  write(root / "tests/cpu/test_a.cpp", "const std::string k = std::string(DATA) + \"/gpu-2026-final/pad.db\";\n"
                                       "const std::string t = std::string(DATA) + \"/traces/\" + name + \".json\";\n"
                                       "for (const char* name : {\"gpt2\"}) read(\"deep/one/f.csv\");\n"
                                       "const std::string s = \"/split/\";\n");
  write(root / "tests/python/test_b.py", "DATA / \"deep\" / \"g.csv\"\nDATA / \"s.db\"\n");
  for (const char* file : {"gpu-2026-final/pad.db", "gpu-2026-final/log.txt", "gpu-2026/pad.db", "traces/gpt2.json",
                           "traces/gpt2-large.json", "slurm/shard.db", "deep/one/f.csv", "deep/other/g.csv",
                           "split/s.db", "evidence/README.md", "notes.md"})
    write(root / "tests/data" / file, "x\n");
  write(root / "tests/data/evidence/README.md", "see tests/data/evidence/ and /notes.md\n");
  const std::vector<std::string> unread = unread_fixtures(root);
  EXPECT_EQ(unread, (std::vector<std::string>{"deep/other/g.csv", "evidence/README.md", "gpu-2026-final/log.txt",
                                              "gpu-2026/pad.db", "notes.md", "split/s.db", "traces/gpt2-large.json"}))
      << joined(unread);
  fs::remove_all(root);
}
