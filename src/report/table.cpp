#include "report/table.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace shapescope {

void write_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right,
                 const std::string& indent) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line = indent;
    for (size_t i = 0; i < row.size(); ++i) {
      if (i > 0) line += "  ";
      if (i < right.size() && right[i]) {
        line += fmt::format("{:>{}}", row[i], widths[i]);
      } else if (i + 1 < row.size()) {
        line += fmt::format("{:<{}}", row[i], widths[i]);
      } else {
        line += row[i];
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  }
}

}  // namespace shapescope
