// CSV as RFC 4180 writes it (and spreadsheets export it): the one reader of the GEMM lists
// (model/gemm_list.cpp) and of the tests that read back what `export` and `sweep --format csv` write.
// Pure C++.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shapescope {

// The record that starts at `pos` in `text`: its fields, up to a line break outside quotes or the end
// of the text; `pos` moves past the line break. A field may be double-quoted and then hold commas,
// doubled quotes ("" is one quote) and line breaks; an unquoted field is trimmed of blanks, and the
// CR of a CRLF line end is dropped. nullopt when a quote is still open at the end of the text.
std::optional<std::vector<std::string>> next_csv_record(std::string_view text, size_t& pos);

}  // namespace shapescope
