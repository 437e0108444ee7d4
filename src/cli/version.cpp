// `shapescope --version`: the version, the commit, and what the binary was built with.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.hpp"
#include "common/output_file.hpp"
#include "build_info.hpp"   // generated at configure time (CMakeLists.txt)
#include "git_version.hpp"  // generated at build time (cmake/git_version.cmake)

namespace shapescope {

std::string version_text() {
  return fmt::format("shapescope {} ({})\nbuilt with {}\ndata (presets, plot templates): {}, {}", SHAPESCOPE_VERSION,
                     SHAPESCOPE_GIT, SHAPESCOPE_BUILT_WITH, data_dir("models"), data_dir("plots"));
}

std::string version_line() {
  const std::string text = version_text();
  return text.substr(0, text.find('\n'));
}

void write_whole_output(const std::string& path, const std::string& option,
                        const std::function<void(std::ostream&)>& write) {
  if (path == "-") {
    write(std::cout);
    return;
  }
  OutputFile out(path, option);
  write(out.stream());
  out.commit();
}

}  // namespace shapescope
