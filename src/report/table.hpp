// The one plain-text table writer: columns as wide as their widest cell, two spaces apart, the whole
// table fitted to the width of the terminal it is read on (table_width()).
#pragma once
#include <cstddef>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace shapescope {

// What the writer may do to a column while the table is wider than table_width(), in this order:
// shorten the `shorten_to` columns (a kernel name, cut in the middle: "cutlass_75_...256x128_nn_align1")
// and wrap the `wrap_at` column (a sentence, the last column: its words go on to lines of their own,
// under the column) down to those widths; then drop the `drop` columns, 1 first, then 2, ...,
// shortening and wrapping again after each. A column with none of them is always whole. Each table
// decides its own (report/output.cpp's points table, profile's, pad's, explain's).
struct ColumnFit {
  int drop = 0;           // 0: never dropped
  size_t shorten_to = 0;  // 0: never shortened
  size_t wrap_at = 0;     // 0: never wrapped
  bool keep_end = false;  // shortened at its start instead ("...h100/sweep.db": a path's end says most)
};

// The width tables fit: $COLUMNS when it is a positive number, else the terminal's when standard
// output is one, else 120; no limit once set_wide_tables(true) (--wide: every column, whole).
size_t table_width();
void set_wide_tables(bool wide);
bool wide_tables();

// Writes `rows` (the header, if any, is the first row; rows may be shorter than others). Column i is
// right-aligned where right[i] is true, else left-aligned; a left-aligned last cell is not padded,
// and no line ends in blanks. Each line starts with `indent`. `fit` (per column; missing entries are
// {}) says how the table may be narrowed to table_width(); with none given, a left-aligned last
// column of sentences (a cell below the header with a blank) wraps, down to 40 characters.
void write_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right,
                 const std::string& indent = "", std::vector<ColumnFit> fit = {});

// A table's fit by its header's names: {{"kernel", {0, 24}}, {"clock [MHz]", {1}}}; a name the header
// lacks is skipped (a column shown only sometimes).
std::vector<ColumnFit> fit_by_name(const std::vector<std::string>& header,
                                   const std::vector<std::pair<std::string, ColumnFit>>& by_name);

// `name` cut in the middle to `width` characters, "..." between its head and its last 17 (the end of
// a library kernel's name says its tile and alignment: "256x128_nn_align1"); whole when it fits, or
// when `width` leaves no head.
std::string shorten_middle(const std::string& name, size_t width);

}  // namespace shapescope
