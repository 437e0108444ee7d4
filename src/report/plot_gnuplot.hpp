// A figure as gnuplot draws it, and gnuplot itself: the script (generated variables, then the
// kind's template from plots/), the data file it reads, and the gnuplot process that renders both
// SVG (hover text on every point) and PNG. The script and data stay beside the pictures, so that
// anyone can restyle a figure and run gnuplot on it again. Pure C++ (POSIX for the process).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace shapescope {

// One `index` of the data file.
struct DataBlock {
  std::string title;             // a comment above the block: what its points are
  std::string columns;           // a comment naming the columns: "n  TFLOP/s  tooltip"
  std::vector<std::string> rows;
};

struct Figure {
  std::string kind;                      // the template: plots/<kind>.gp
  std::vector<std::string> definitions;  // gnuplot lines the template reads (TITLE = "...")
  std::vector<DataBlock> blocks;
  size_t tooltips = 0;                   // points with hover text: what the SVG must hold
  int width = 1000, height = 600;        // pixels of both pictures

  void set_text(std::string_view name, std::string_view value);
  void set_number(std::string_view name, double value);
  void set_texts(std::string_view name, const std::vector<std::string>& values);  // a gnuplot array
  void set_numbers(std::string_view name, const std::vector<double>& values);
  // Appends a block and returns its index (for `index N` in the template).
  size_t add_block(DataBlock block);
};

// A gnuplot string literal: double quotes, backslash escapes, "\n" for line breaks.
std::string gnuplot_string(std::string_view text);
// Hover text as a quoted data-file field: lines joined by the two characters \n (gnuplot's SVG
// script splits on them); quotes and backslashes, which would end the string in the data file or
// in the SVG's inline script, become '`', and other bytes outside printable ASCII become '?'.
std::string tooltip_field(const std::vector<std::string>& lines);

// Where the four files go. --out DIR/ or an existing directory: DIR/NAME.*; anything else is a
// prefix PATH: PATH.svg, PATH.png, PATH.gp, PATH.dat (its directory must exist).
struct PlotPaths {
  std::string dir;   // where gnuplot runs: the script names its files relative to it
  std::string name;  // file name without extension
  std::string file(std::string_view extension) const;  // "dir/name.ext"
};
// Throws Error(kUsage) naming --out when its directory is missing or cannot be made.
PlotPaths plot_paths(const std::string& out, const std::string& default_name);

// The script: a header saying how it was made and how to run it again, the variables, the
// terminal set-up for SVG and PNG, then the template text.
std::string script_text(const Figure& figure, std::string_view template_text, const PlotPaths& paths,
                        std::string_view command_line);
std::string data_text(const Figure& figure, std::string_view title);

// The gnuplot program to run: a path, or a name looked up on PATH. Throws Error(kNoGnuplot, exit 7)
// with the package to install when it is not there.
std::string find_gnuplot(const std::string& program);
// Runs `gnuplot NAME.gp` in paths.dir (no shell) and returns what it wrote on stderr (warnings);
// throws Error(kInternal) with gnuplot's first error line when it fails, naming the script as
// `shown` (where it would have gone: the run itself is in a temporary folder).
std::string run_gnuplot(const std::string& gnuplot, const PlotPaths& paths, const PlotPaths& shown);

// The whole job: reads the template (Error(kInternal) naming it when missing), finds gnuplot (exit 3
// when missing), writes NAME.gp and NAME.dat, runs gnuplot and checks that NAME.svg and NAME.png
// came out, all in a temporary folder beside paths.dir; only then are the four files moved into
// place. A failure at any step leaves paths.dir as it was. Returns gnuplot's warnings ("" when none).
std::string render_figure(const Figure& figure, const std::string& template_path, const PlotPaths& paths,
                          const std::string& gnuplot, std::string_view command_line, std::string_view title);

}  // namespace shapescope
