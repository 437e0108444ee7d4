// The Debian package (CTest label `deb`): cpack builds it from this build; its control fields name
// the libraries the binary links; on a machine where we are root and no shapescope package is
// installed, dpkg installs it, the installed /usr/bin/shapescope runs from another folder, the
// system's python3 imports the Python package and runs that binary, and dpkg removes it all again. NVIDIA's CUDA packages (libcublas-X-Y, cuda-cupti-X-Y) are the only dependencies
// dpkg is told to ignore: CI's CUDA toolkit comes from NVIDIA's installer, not from apt.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// The full build's package, or the views-only one of a -DSHAPESCOPE_GPU=OFF build.
const std::string kPackage = SHAPESCOPE_GPU_BUILD ? "shapescope" : "shapescope-views";
// The Python package's folder under the prefix: where the system's python3 looks.
const std::string kPython = std::string(SHAPESCOPE_PYTHON_DIR) + "/shapescope";

std::string output_of(const std::string& cmd) {
  std::string out;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  pclose(pipe);
  return out;
}

class DebianPackage : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("shapescope_deb_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const std::string cmd = std::string("cpack -G DEB --config '") + SHAPESCOPE_BUILD_DIR + "/CPackConfig.cmake' -B '" +
                            dir_.string() + "' > '" + (dir_ / "cpack.log").string() + "' 2>&1";
    cpack_code_ = std::system(cmd.c_str());
    for (const auto& entry : fs::directory_iterator(dir_))
      if (entry.path().extension() == ".deb") deb_ = entry.path();
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  void SetUp() override {
    if (std::system("command -v dpkg-deb > /dev/null 2>&1") != 0) GTEST_SKIP() << "no dpkg-deb: not a Debian system";
    ASSERT_EQ(cpack_code_, 0) << output_of("cat '" + (dir_ / "cpack.log").string() + "'");
    ASSERT_FALSE(deb_.empty()) << "cpack made no .deb in " << dir_;
  }
  static std::string field(const std::string& name) {
    std::string value = output_of("dpkg-deb -f '" + deb_.string() + "' " + name);
    while (!value.empty() && value.back() == '\n') value.pop_back();
    return value;
  }

  static fs::path dir_, deb_;
  static int cpack_code_;
};
fs::path DebianPackage::dir_, DebianPackage::deb_;
int DebianPackage::cpack_code_ = -1;

TEST_F(DebianPackage, NamesTheLibrariesItLinks) {
  EXPECT_EQ(field("Package"), kPackage);
  const std::string depends = field("Depends");
  for (const char* library : {"libfmt", "libsqlite3-0", "libstdc++6", "libc6"})
    EXPECT_NE(depends.find(library), std::string::npos) << library << " missing from Depends: " << depends;
  for (const char* library : {"libcublas-", "cuda-cupti-"})
    EXPECT_EQ(depends.find(library) != std::string::npos, bool(SHAPESCOPE_GPU_BUILD)) << library << ": " << depends;
  const std::string files = output_of("dpkg-deb -c '" + deb_.string() + "'");
  for (const std::string& path : std::vector<std::string>{"./usr/bin/shapescope", "./usr/share/shapescope/models/gpt2.json",
                                                         "./usr/share/shapescope/plots/flops.gp",
                                                         "./usr/" + kPython + "/__init__.py", "./usr/" + kPython + "/_layout.py",
                                                         "./usr/" + kPython + "/_fields.py"})
    EXPECT_NE(files.find(path), std::string::npos) << path << " missing from the package:\n" << files;
}

TEST_F(DebianPackage, InstallsRunsAndRemoves) {
  if (geteuid() != 0) GTEST_SKIP() << "not root: dpkg -i needs root (CI runs as root)";
  for (const char* name : {"shapescope", "shapescope-views"})
    if (std::system(("dpkg -s " + std::string(name) + " > /dev/null 2>&1").c_str()) == 0)
      GTEST_SKIP() << "a " << name << " package is installed already: this test does not touch it";
  // The whole package names, e.g. libcublas-13-0, as Depends gives them.
  const std::string depends = field("Depends");
  auto package = [&](const std::string& prefix) {
    const size_t at = depends.find(prefix);
    return at == std::string::npos ? prefix : depends.substr(at, depends.find_first_of(", ", at) - at);
  };
  const std::string ignore =
      SHAPESCOPE_GPU_BUILD ? "--ignore-depends=" + package("libcublas-") + "," + package("cuda-cupti-") : "";
  ASSERT_EQ(std::system(("dpkg " + ignore + " -i '" + deb_.string() + "' > '" + (dir_ / "dpkg.log").string() + "' 2>&1").c_str()), 0)
      << output_of("cat '" + (dir_ / "dpkg.log").string() + "'");
  const std::string version = output_of("cd / && env -u SHAPESCOPE_DATA /usr/bin/shapescope --version 2>&1");
  const std::string dry_run = output_of("cd / && /usr/bin/shapescope pad --model gpt2 --tokens 12288 --dry-run 2>&1");
  // The system's python3 imports the package from /usr (writing its bytecode there, as root does),
  // and the package runs /usr/bin/shapescope.
  const std::string python = output_of(
      "cd / && env -u SHAPESCOPE_BIN -u PYTHONPATH -u PYTHONDONTWRITEBYTECODE /usr/bin/python3 -c 'import shapescope; "
      "print(shapescope.find_binary()); print(shapescope.pad(model=\"gpt2\", tokens=12288, dry_run=True).steps[0].tokens)' 2>&1");
  const int removed = std::system(("dpkg -r " + kPackage + " > /dev/null 2>&1").c_str());
  EXPECT_NE(version.find("/usr/share/shapescope/models"), std::string::npos) << version;
  EXPECT_NE(dry_run.find("lm_head"), std::string::npos) << dry_run;
  EXPECT_EQ(python, "/usr/bin/shapescope\n12288\n");
  EXPECT_EQ(removed, 0);
  EXPECT_FALSE(fs::exists("/usr/bin/shapescope"));
  EXPECT_FALSE(fs::exists("/usr/share/shapescope"));
  EXPECT_FALSE(fs::exists("/usr/" + kPython)) << "left behind by dpkg -r";
}

}  // namespace
