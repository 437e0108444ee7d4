// tests/data holds only fixtures that a test reads: every top-level entry (a folder or a file) must be
// named as a path component ("/NAME/", "/NAME\"", "/NAME" at the end of a word) in a file under tests/
// outside tests/data, or in CMakeLists.txt (which passes tests their paths). Measurements that no test
// reads belong to bench/<topic>/results/ with the script that made them (bench/README.md).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The text of the files that can name a fixture: everything under tests/ but tests/data and this file
// (whose planted names are not fixtures), and CMakeLists.txt.
std::string referring_text(const fs::path& root) {
  std::string text = read_text(root / "CMakeLists.txt");
  const fs::path data = root / "tests" / "data";
  for (auto it = fs::recursive_directory_iterator(root / "tests"); it != fs::recursive_directory_iterator(); ++it) {
    if (it->path() == data) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && it->path().filename() != "test_fixtures.cpp") text += read_text(it->path()) + "\n";
  }
  return text;
}

// "/NAME" followed by a character that cannot continue a file name in a path: '/', a quote, a space,
// or the end. So a folder "gpu-2026" is not read because "/gpu-2026-final/" is.
bool names_path_component(const std::string& text, const std::string& name) {
  const std::string needle = "/" + name;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    const size_t end = at + needle.size();
    if (end == text.size()) return true;
    const char next = text[end];
    if (next == '/' || next == '"' || next == '\'' || next == ' ' || next == '\n' || next == '`' || next == ')')
      return true;
  }
  return false;
}

// The top-level entries of root/tests/data that no test names, sorted.
std::vector<std::string> unread_fixtures(const fs::path& root) {
  const std::string text = referring_text(root);
  std::set<std::string> unread;
  for (const auto& entry : fs::directory_iterator(root / "tests" / "data")) {
    const std::string name = entry.path().filename().string();
    if (!names_path_component(text, name)) unread.insert(name);
  }
  return {unread.begin(), unread.end()};
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

// The check itself, on a planted tree: a folder named only as a prefix of another's name, a file named
// nowhere and a folder named only in tests/data itself are reported; entries named by a test or by
// CMakeLists.txt are not.
TEST(Fixtures, ReportsAnEntryNoTestReads) {
  const fs::path root = fs::path(::testing::TempDir()) / ("shapescope_fixtures_" + std::to_string(::getpid()));
  fs::remove_all(root);
  write(root / "CMakeLists.txt", "add_test(NAME slurm COMMAND run.sh ${CMAKE_CURRENT_SOURCE_DIR}/tests/data/slurm)\n");
  write(root / "tests/cpu/test_a.cpp", "const std::string k = std::string(DATA) + \"/gpu-2026-final/pad.db\";\n"
                                       "const std::string t = std::string(DATA) + \"/traces/\" + name;\n");
  for (const char* folder : {"gpu-2026-final", "gpu-2026", "traces", "slurm", "evidence"})
    write(root / "tests/data" / folder / "x.txt", "x\n");
  write(root / "tests/data/evidence/README.md", "see tests/data/evidence/ and /notes.md\n");
  write(root / "tests/data/notes.md", "x\n");
  const std::vector<std::string> unread = unread_fixtures(root);
  EXPECT_EQ(unread, (std::vector<std::string>{"evidence", "gpu-2026", "notes.md"})) << joined(unread);
  fs::remove_all(root);
}
