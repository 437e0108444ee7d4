#include "device/gpu_processes.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

namespace shapescope {

std::optional<unsigned> parent_from_stat(std::string_view text) {
  const size_t close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  // After ") ": the state (one letter), a space, then the parent's id.
  std::string_view rest = text.substr(close + 1);
  if (rest.size() < 4 || rest[0] != ' ' || rest[2] != ' ') return std::nullopt;
  rest.remove_prefix(3);
  unsigned parent = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), parent);
  if (error != std::errc() || end == rest.data() || (end != rest.data() + rest.size() && *end != ' '))
    return std::nullopt;
  return parent;
}

std::vector<unsigned> ancestor_chain(unsigned pid, const std::function<std::optional<unsigned>(unsigned)>& parent_of) {
  constexpr size_t kMost = 256;
  std::vector<unsigned> chain;
  for (std::optional<unsigned> parent = parent_of(pid); parent && *parent != 0 && chain.size() < kMost;
       parent = parent_of(*parent)) {
    if (*parent == pid || std::find(chain.begin(), chain.end(), *parent) != chain.end()) break;
    chain.push_back(*parent);
  }
  return chain;
}

std::vector<unsigned> ancestor_pids(const std::string& proc_root) {
  const auto parent_of = [&](unsigned pid) -> std::optional<unsigned> {
    std::ifstream file(proc_root + "/" + std::to_string(pid) + "/stat");
    if (!file) return std::nullopt;
    const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    return parent_from_stat(text);
  };
  return ancestor_chain(unsigned(getpid()), parent_of);
}

size_t holding_device(const std::vector<unsigned>& pids, unsigned minor, const std::string& proc_root) {
  namespace fs = std::filesystem;
  const fs::path device = "/dev/nvidia" + std::to_string(minor);
  size_t holding = 0;
  for (const unsigned pid : pids) {
    std::error_code error;
    fs::directory_iterator it(fs::path(proc_root) / std::to_string(pid) / "fd", error);
    for (; !error && it != fs::directory_iterator(); it.increment(error)) {
      std::error_code link_error;
      if (fs::read_symlink(it->path(), link_error) == device && !link_error) {
        ++holding;
        break;
      }
    }
  }
  return holding;
}

size_t other_processes_on_gpu(const std::vector<unsigned>& listed, unsigned self, const std::vector<unsigned>& ancestors,
                              const std::function<size_t()>& ancestors_holding) {
  if (std::find(listed.begin(), listed.end(), self) != listed.end()) {
    return size_t(std::count_if(listed.begin(), listed.end(), [&](unsigned pid) {
      return pid != self && std::find(ancestors.begin(), ancestors.end(), pid) == ancestors.end();
    }));
  }
  if (listed.empty()) return 0;
  // Ids of another namespace: this process is one of them, and so is each ancestor holding the GPU.
  const size_t ours = 1 + (ancestors.empty() ? 0 : ancestors_holding());
  return listed.size() > ours ? listed.size() - ours : 0;
}

}  // namespace shapescope
