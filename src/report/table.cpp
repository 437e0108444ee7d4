#include "report/table.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string_view>

namespace shapescope {

namespace {

constexpr size_t kDefaultWidth = 120;
constexpr size_t kGap = 2;              // blanks between two columns
constexpr size_t kDefaultWrapAt = 40;   // a table given no fit: its last column wraps down to this
bool g_wide = false;

// Characters as a terminal counts them: UTF-8 continuation bytes take no column.
size_t display_width(std::string_view text) {
  return size_t(std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xc0) != 0x80; }));
}

// The first `width` characters' bytes (never inside a UTF-8 sequence).
size_t bytes_of_first(std::string_view text, size_t width) {
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xc0) == 0x80) continue;
    if (chars++ == width) return i;
  }
  return text.size();
}

std::string pad(const std::string& text, size_t width, bool right) {
  const size_t w = display_width(text);
  if (w >= width) return text;
  return right ? std::string(width - w, ' ') + text : text + std::string(width - w, ' ');
}

// `text` in lines of at most `width` characters, broken at blanks (a word longer than the line is
// cut); at least one line.
std::vector<std::string> wrapped(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  std::string_view rest = text;
  while (display_width(rest) > width) {
    size_t cut = bytes_of_first(rest, width + 1);
    const size_t blank = rest.substr(0, cut).rfind(' ');
    if (blank != std::string_view::npos && blank > 0) {
      cut = blank;
    } else {
      cut = bytes_of_first(rest, width);
    }
    lines.emplace_back(rest.substr(0, cut));
    while (!lines.back().empty() && lines.back().back() == ' ') lines.back().pop_back();
    rest.remove_prefix(cut);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  }
  lines.emplace_back(rest);
  return lines;
}

struct Layout {
  std::vector<bool> shown;
  std::vector<size_t> widths;  // of the shown columns (the others 0)
};

// The widths the shown columns take within `limit`: fixed columns their widest cell, flexible ones
// (shortened, wrapped) what is left, each at least its own minimum; false when even that is too wide.
bool lay_out(const std::vector<size_t>& natural, const std::vector<ColumnFit>& fit, size_t indent, size_t limit,
             Layout& layout) {
  size_t used = indent, columns = 0, flexible_min = 0;
  for (size_t i = 0; i < natural.size(); ++i) {
    if (!layout.shown[i]) continue;
    ++columns;
    const size_t least = std::max(fit[i].shorten_to, fit[i].wrap_at);
    if (least > 0 && natural[i] > least) {
      flexible_min += least;
    } else {
      used += natural[i];
    }
  }
  used += columns > 0 ? (columns - 1) * kGap : 0;
  if (used + flexible_min > limit) return false;
  size_t spare = limit - used - flexible_min;
  layout.widths.assign(natural.size(), 0);
  for (size_t i = 0; i < natural.size(); ++i) {
    if (!layout.shown[i]) continue;
    const size_t least = std::max(fit[i].shorten_to, fit[i].wrap_at);
    if (least > 0 && natural[i] > least) {
      const size_t more = std::min(natural[i] - least, spare);
      layout.widths[i] = least + more;
      spare -= more;
    } else {
      layout.widths[i] = natural[i];
    }
  }
  return true;
}

// Which columns are shown and how wide, narrowest last: all of them when they fit `limit` (their
// flexible ones narrowed), else without the `drop` columns in their order, as long as one remains.
Layout fit_columns(const std::vector<size_t>& natural, const std::vector<ColumnFit>& fit, size_t indent, size_t limit) {
  Layout layout;
  layout.shown.assign(natural.size(), true);
  while (!lay_out(natural, fit, indent, limit, layout)) {
    int next = 0;
    size_t at = 0;
    for (size_t i = 0; i < fit.size(); ++i)
      if (layout.shown[i] && fit[i].drop > 0 && (next == 0 || fit[i].drop < next)) std::tie(next, at) = std::pair{fit[i].drop, i};
    if (next == 0) {
      // Nothing more to drop: flexible columns at their least, and the table as wide as that is.
      lay_out(natural, fit, indent, std::numeric_limits<size_t>::max() / 2, layout);
      for (size_t i = 0; i < natural.size(); ++i) {
        const size_t least = std::max(fit[i].shorten_to, fit[i].wrap_at);
        if (layout.shown[i] && least > 0) layout.widths[i] = std::min(natural[i], least);
      }
      return layout;
    }
    layout.shown[at] = false;
  }
  return layout;
}

}  // namespace

size_t table_width() {
  if (g_wide) return std::numeric_limits<size_t>::max() / 2;
  if (const char* columns = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long value = std::strtol(columns, &end, 10);
    if (end != columns && *end == '\0' && value > 0) return size_t(value);
  }
  winsize size{};
  if (isatty(STDOUT_FILENO) == 1 && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return kDefaultWidth;
}

void set_wide_tables(bool wide) { g_wide = wide; }
bool wide_tables() { return g_wide; }

std::vector<ColumnFit> fit_by_name(const std::vector<std::string>& header,
                                   const std::vector<std::pair<std::string, ColumnFit>>& by_name) {
  std::vector<ColumnFit> fit(header.size());
  for (const auto& [name, f] : by_name) {
    const auto at = std::find(header.begin(), header.end(), name);
    if (at != header.end()) fit[size_t(at - header.begin())] = f;
  }
  return fit;
}

std::string shorten_middle(const std::string& name, size_t width) {
  constexpr std::string_view kElided = "...";
  constexpr size_t kTail = 17;
  const size_t length = display_width(name);
  if (length <= width || width < kElided.size() + kTail + 1) return name;
  const size_t head = bytes_of_first(name, width - kElided.size() - kTail);
  const size_t tail = bytes_of_first(name, length - kTail);
  return name.substr(0, head) + std::string(kElided) + name.substr(tail);
}

void write_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right,
                 const std::string& indent, std::vector<ColumnFit> fit) {
  std::vector<size_t> natural;
  for (const auto& row : rows) {
    if (natural.size() < row.size()) natural.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) natural[i] = std::max(natural[i], display_width(row[i]));
  }
  // Given no fit, a last column of sentences wraps (one of names, such as kernels, is left whole).
  const size_t last_column = natural.empty() ? 0 : natural.size() - 1;
  const bool last_left = !natural.empty() && (last_column >= right.size() || !right[last_column]);
  const bool sentences = last_left && std::any_of(rows.begin() + (rows.empty() ? 0 : 1), rows.end(), [&](const auto& row) {
                           return row.size() > last_column && row[last_column].find(' ') != std::string::npos;
                         });
  if (fit.empty() && sentences) {
    fit.resize(natural.size());
    fit.back().wrap_at = kDefaultWrapAt;
  }
  fit.resize(natural.size());
  const Layout layout = fit_columns(natural, fit, display_width(indent), table_width());
  for (const auto& row : rows) {
    // Each shown cell as its lines: one, or a wrapped cell's several.
    std::vector<std::vector<std::string>> cells(row.size());
    size_t height = 1, last = 0;
    for (size_t i = 0; i < row.size(); ++i) {
      if (!layout.shown[i]) continue;
      last = i;
      const size_t width = layout.widths[i];
      if (fit[i].wrap_at > 0 && display_width(row[i]) > width) {
        cells[i] = wrapped(row[i], width);
      } else if (fit[i].shorten_to > 0 && display_width(row[i]) > width) {
        const size_t length = display_width(row[i]);
        cells[i] = {fit[i].keep_end && width > 3 ? "..." + row[i].substr(bytes_of_first(row[i], length - (width - 3)))
                                                 : shorten_middle(row[i], width)};
      } else {
        cells[i] = {row[i]};
      }
      height = std::max(height, cells[i].size());
    }
    for (size_t l = 0; l < height; ++l) {
      std::string line = indent;
      bool first = true;
      for (size_t i = 0; i < row.size(); ++i) {
        if (!layout.shown[i]) continue;
        if (!first) line += std::string(kGap, ' ');
        first = false;
        const std::string cell = l < cells[i].size() ? cells[i][l] : "";
        const bool is_right = i < right.size() && right[i];
        line += is_right || i != last ? pad(cell, layout.widths[i], is_right) : cell;
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out << line << '\n';
    }
  }
}

}  // namespace shapescope
