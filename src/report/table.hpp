// The one plain-text table writer: columns as wide as their widest cell, two spaces apart.
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace shapescope {

// Writes `rows` (the header, if any, is the first row; rows may be shorter than others). Column i is
// right-aligned where right[i] is true, else left-aligned; a left-aligned last cell is not padded,
// and no line ends in blanks. Each line starts with `indent`.
void write_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right,
                 const std::string& indent = "");

}  // namespace shapescope
