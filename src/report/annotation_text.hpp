// The one place for the text of an annotation's tile grid, waves and alignment: the short cells of
// the points table ("128x256", "15x8", "3.88p") and the one-line descriptions of plot tooltips and
// notes ("tile 256x128: 8 x 15 = 120 tiles, 91% useful"). New wording for tiles and waves (explain's
// sentences when they leave the model) belongs here too.
#pragma once
#include <string>

#include "model/annotate.hpp"

namespace shapescope {

// Table cells; "-" when unknown.
std::string tile_cell(const Annotation& annotation);    // the tile along M x N: "128x256"
std::string grid_cell(const Annotation& annotation);    // tiles along M x N, "x4b" batches, "x2k" split-K
std::string waves_cell(const Annotation& annotation);   // "3.88", with "p" for a persistent grid
std::string align_cell(const Annotation& annotation);   // largest power of two dividing M/N/K: "64/1/64"
std::string rule_cell(const Annotation& annotation);    // operands breaking the 16-byte rule: "AB", or "ok"

// One line each, for tooltips and figure notes.
std::string describe_tile_line(const Annotation& annotation);
std::string describe_waves_line(const Annotation& annotation);
std::string describe_alignment_line(const Annotation& annotation);

}  // namespace shapescope
