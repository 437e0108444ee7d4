// Where the binary finds its data (model presets, plot templates): installed, in the build tree, or
// where SHAPESCOPE_DATA says.
#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli/commands.hpp"

#ifndef SHAPESCOPE_SOURCE_DIR
#define SHAPESCOPE_SOURCE_DIR ""
#endif

namespace shapescope {

namespace fs = std::filesystem;

std::string data_dir(const std::string& kind) {
  // An explicit override wins, even when it lacks the folder: the error then names that path.
  if (const char* env = std::getenv("SHAPESCOPE_DATA"); env != nullptr && *env != '\0')
    return (fs::path(env) / kind).string();
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  const fs::path installed = ec ? fs::path() : exe.parent_path().parent_path() / "share" / "shapescope" / kind;
  // Installed (PREFIX/bin/shapescope -> PREFIX/share/shapescope/KIND), then the source tree the
  // binary was built from, then a checkout whose build/ the binary sits in.
  for (const fs::path& candidate :
       {installed, fs::path(SHAPESCOPE_SOURCE_DIR).empty() ? fs::path() : fs::path(SHAPESCOPE_SOURCE_DIR) / kind,
        ec ? fs::path() : exe.parent_path().parent_path() / kind}) {
    if (!candidate.empty() && fs::is_directory(candidate, ec)) return candidate.string();
  }
  return installed.empty() ? kind : installed.string();
}

}  // namespace shapescope
