// `shapescope --version`: the version, the commit, and what the binary was built with.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "git_version.hpp"  // generated at build time (cmake/git_version.cmake)

namespace shapescope {

std::string version_text() {
  return fmt::format("shapescope {} ({})\nbuilt with CUDA {}, cuBLAS {}, for architectures {}\ndata (presets, plot "
                     "templates): {}, {}",
                     SHAPESCOPE_VERSION, SHAPESCOPE_GIT, SHAPESCOPE_BUILT_CUDA, SHAPESCOPE_BUILT_CUBLAS,
                     SHAPESCOPE_BUILT_ARCHS, data_dir("models"), data_dir("plots"));
}

}  // namespace shapescope
