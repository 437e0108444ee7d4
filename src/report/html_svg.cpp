// inline_svg(): gnuplot's SVG terminal (`mouse standalone`) writes a page of its own: an XML
// declaration, ~35 KB of JavaScript per figure, onmousemove handlers that call it with each point's
// hover text, a coordinate box and a grid-toggle button. Inside a report none of that may stay (no
// scripts), so the SVG is rewritten tag by tag: what only the script needs is dropped, and the hover
// text moves into an SVG <title>, which every browser shows as a tooltip without any script.
#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "report/html_report.hpp"

namespace shapescope {
namespace {

struct Attribute {
  std::string name, value;
  char quote = '"';
};

struct Tag {
  std::string name;
  std::vector<Attribute> attributes;
  bool self_closing = false;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Parses the start tag at svg[at] == '<' (quote-aware: gnuplot's hover text holds '>'). Returns the
// position after its '>', or npos when the tag does not end.
size_t parse_tag(const std::string& svg, size_t at, Tag& tag) {
  size_t i = at + 1;
  while (i < svg.size() && !is_space(svg[i]) && svg[i] != '>' && svg[i] != '/') tag.name += svg[i++];
  while (i < svg.size()) {
    while (i < svg.size() && is_space(svg[i])) ++i;
    if (i >= svg.size()) break;
    if (svg[i] == '>') return i + 1;
    if (svg[i] == '/') {
      tag.self_closing = true;
      ++i;
      continue;
    }
    Attribute a;
    while (i < svg.size() && !is_space(svg[i]) && svg[i] != '=' && svg[i] != '>' && svg[i] != '/') a.name += svg[i++];
    while (i < svg.size() && is_space(svg[i])) ++i;
    if (i < svg.size() && svg[i] == '=') {
      ++i;
      while (i < svg.size() && is_space(svg[i])) ++i;
      if (i < svg.size() && (svg[i] == '"' || svg[i] == '\'')) {
        a.quote = svg[i];
        const size_t end = svg.find(a.quote, i + 1);
        if (end == std::string::npos) return std::string::npos;
        a.value = svg.substr(i + 1, end - i - 1);
        i = end + 1;
      } else {
        while (i < svg.size() && !is_space(svg[i]) && svg[i] != '>') a.value += svg[i++];
      }
    }
    if (!a.name.empty()) tag.attributes.push_back(std::move(a));
  }
  return std::string::npos;
}

// Where an element that starts at `after` (just past its start tag) ends: past its end tag.
size_t skip_element(const std::string& svg, size_t after, const Tag& tag) {
  if (tag.self_closing) return after;
  const std::string close = "</" + tag.name + ">";
  const size_t end = svg.find(close, after);
  return end == std::string::npos ? svg.size() : end + close.size();
}

std::string attribute(const Tag& tag, std::string_view name) {
  for (const Attribute& a : tag.attributes)
    if (a.name == name) return a.value;
  return {};
}

// What only gnuplot's script uses: the coordinate readout, the hover box it draws, the image
// popover and the grid button (an <image> with an onclick).
bool script_only(const Tag& tag) {
  const std::string id = attribute(tag, "id");
  return tag.name == "script" || tag.name == "image" || id == "coord_text" || id == "hypertextbox" ||
         id == "hypertext" || id == "hyperimage";
}

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// The hover text of gnuplot_svg.showHypertext(evt,'LINE\nLINE'), as title text: lines split at the
// two characters \n, and '<' '>' escaped ('&' arrives escaped already: the value is XML).
std::string hover_text(const std::string& handler) {
  constexpr std::string_view kCall = "gnuplot_svg.showHypertext(evt,'";
  if (handler.rfind(kCall, 0) != 0) return {};
  std::string text = handler.substr(kCall.size());
  if (text.size() >= 2 && text.compare(text.size() - 2, 2, "')") == 0) text.resize(text.size() - 2);
  text = replace_all(std::move(text), "\\n", "\n");
  text = replace_all(std::move(text), "<", "&lt;");
  return replace_all(std::move(text), ">", "&gt;");
}

// The start tag as it goes on the page; `hover` gets the point's hover text, if it has one.
std::string rewrite_tag(const Tag& tag, const std::string& prefix, std::string& hover) {
  std::string out = "<" + tag.name;
  if (tag.name == "svg") out += " class=\"figure-svg\"";
  for (const Attribute& a : tag.attributes) {
    if (a.name == "onmousemove") hover = hover_text(a.value);
    const bool dropped = a.name.rfind("on", 0) == 0 || a.name.rfind("xmlns", 0) == 0 ||
                         (tag.name == "svg" && (a.name == "width" || a.name == "height"));
    if (dropped) continue;
    std::string value = replace_all(a.value, "url(#", "url(#" + prefix);
    if (a.name == "id") value = prefix + value;
    if ((a.name == "href" || a.name == "xlink:href") && !value.empty() && value[0] == '#') value = "#" + prefix + value.substr(1);
    out += " " + a.name + "=" + a.quote + value + a.quote;
  }
  if (!hover.empty()) out += " class=\"tip\"";
  return out + (tag.self_closing ? "/>" : ">");
}

}  // namespace

std::string inline_svg(const std::string& svg, const std::string& prefix) {
  std::string out;
  out.reserve(svg.size());
  size_t i = 0;
  while (i < svg.size()) {
    const size_t lt = svg.find('<', i);
    out.append(svg, i, (lt == std::string::npos ? svg.size() : lt) - i);
    if (lt == std::string::npos) break;
    // Declarations, comments and the like carry nothing a reader sees.
    if (svg.compare(lt, 2, "<?") == 0 || svg.compare(lt, 2, "<!") == 0) {
      const bool comment = svg.compare(lt, 4, "<!--") == 0;
      const size_t end = svg.find(comment ? "-->" : ">", lt);
      i = end == std::string::npos ? svg.size() : end + (comment ? 3 : 1);
      continue;
    }
    if (svg.compare(lt, 2, "</") == 0) {
      const size_t end = svg.find('>', lt);
      out.append(svg, lt, (end == std::string::npos ? svg.size() : end + 1) - lt);
      i = end == std::string::npos ? svg.size() : end + 1;
      continue;
    }
    Tag tag;
    const size_t after = parse_tag(svg, lt, tag);
    if (after == std::string::npos) break;
    // gnuplot's own <title>s: "Gnuplot" for the page, and an empty one in each hover group.
    if (script_only(tag) || tag.name == "title") {
      i = skip_element(svg, after, tag);
      continue;
    }
    // gnuplot opens a styled group around every point and leaves as many empty: a megabyte of a
    // 4096-point figure.
    if (tag.name == "g" && !tag.self_closing) {
      const size_t next = svg.find('<', after);
      if (next != std::string::npos && svg.compare(next, 4, "</g>") == 0 &&
          std::all_of(svg.begin() + long(after), svg.begin() + long(next), is_space)) {
        i = next + 4;
        continue;
      }
    }
    std::string hover;
    out += rewrite_tag(tag, prefix, hover);
    if (!hover.empty()) out += "<title>" + hover + "</title>";
    i = after;
  }
  return out;
}

}  // namespace shapescope
