// `shapescope report`: one self-contained HTML page of a selection of stored points (views/report.hpp):
// the device and libraries, how the points were measured, the flops and waves figures with hover
// text (gnuplot's SVG, inlined), the slow shapes with explain's verdicts and fixes, the cuBLASLt
// heuristic's regret and our kernels against cuBLAS. Nothing on the page is fetched: no scripts,
// no external styles, fonts or images, and a Content-Security-Policy that forbids them.
#pragma once
#include <ostream>
#include <string>

#include "views/report.hpp"

namespace shapescope {

struct HtmlReportOptions {
  std::string templates;     // the folder of plots/<kind>.gp
  std::string gnuplot = "gnuplot";
  std::string scratch_dir;   // the figures are drawn in a temporary folder made here, then removed
  std::string command_line;  // the command that made the page, for its footer
  std::string version;       // shapescope's version text, for the footer
};

// Draws the figures (Error(kNoGnuplot), exit 7, when gnuplot is missing; Error(kInternal) when it
// fails) and writes the page.
void write_html_report(std::ostream& out, const ReportView& view, const HtmlReportOptions& options);

// gnuplot's SVG made to sit inside an HTML page: its scripts, event handlers, XML declaration,
// namespace URLs, fixed size and mouse-box elements removed; each point's hover text turned into an
// SVG <title> (the browser's own tooltip); every id prefixed with `id_prefix` so that two figures on
// one page do not share ids.
std::string inline_svg(const std::string& svg, const std::string& id_prefix);

// Text as HTML: & < > " escaped.
std::string html_escape(const std::string& text);

// Every page's start: the doctype, a Content-Security-Policy that forbids any fetch (styles inline
// only, images as data: URLs), the shared style sheet and the title (escaped); then <body><main>.
// html_page_end() closes them.
std::string html_page_start(const std::string& title);
std::string html_page_end();

}  // namespace shapescope
