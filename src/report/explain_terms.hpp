// Pieces of explain's text (report/explain_report.cpp) kept apart: its small formatters, and the
// model's terms in words (waves and tiles at a point, a wave or tile effect, a fix the model predicts).
#pragma once
#include <cstddef>
#include <string>

#include "views/explain.hpp"

namespace shapescope::explain_text {

std::string share(double part, double whole);  // "56 %"; "-" without a whole
std::string times(double ratio);               // "1.8x", "12x"
std::string us(double value);                  // "12.34 us", "123.4 us"
inline const ExplainPoint& at(const ExplainReport& r, size_t i) { return r.points[i]; }
std::string tiles_cell(const Annotation& a);   // "8x15", "-"

// The points the paired passes left with their survey times (0 without passes).
size_t survey_only(const ExplainReport& r);
// "paired: ...": the paired passes' line (r.paired set): which points, how long, at which clock and
// power, and the points their budget left with their survey times.
std::string paired_line(const ExplainReport& r);

// A wave or tile quantization effect: the model's figures at the point that pays and at the one it is
// measured against (our fixed kernel's tile where it ran at both), or how the target's comes about.
std::string quantization_detail(const ExplainReport& r, const Effect& x);
// A fix the model predicts (a prediction's, without times): its speedup and the terms behind it.
std::string predicted_fix_line(const ExplainReport& r, const Fix& f);

}  // namespace shapescope::explain_text
