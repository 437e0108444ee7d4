#include "core/records.hpp"

#include <cctype>

namespace shapescope {

std::optional<std::pair<int, int>> lt_tile_size(const std::string& name) {
  const size_t x = name.find('x');
  if (x == std::string::npos || x == 0 || x + 1 >= name.size()) return std::nullopt;
  int a = 0, b = 0;
  for (size_t i = 0; i < x; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return std::nullopt;
    a = a * 10 + (name[i] - '0');
  }
  size_t i = x + 1;
  for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])); ++i) b = b * 10 + (name[i] - '0');
  if (i == x + 1 || a <= 0 || b <= 0) return std::nullopt;
  return std::make_pair(a, b);
}

}  // namespace shapescope
