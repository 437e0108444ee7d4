// `shapescope --version`: the version, the commit, and what the binary was built with.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "build_info.hpp"   // generated at configure time (CMakeLists.txt)
#include "git_version.hpp"  // generated at build time (cmake/git_version.cmake)

namespace shapescope {

std::string version_text() {
  return fmt::format("shapescope {} ({})\nbuilt with {}\ndata (presets, plot templates): {}, {}", SHAPESCOPE_VERSION,
                     SHAPESCOPE_GIT, SHAPESCOPE_BUILT_WITH, data_dir("models"), data_dir("plots"));
}

}  // namespace shapescope
