// `profile --html FILE`: a profiled step as one self-contained HTML page, in the style and under the
// rules of `report`'s (report/html_report.hpp: nothing fetched, a Content-Security-Policy that
// forbids it): what the step is and where its times come from (a trace recorded on another GPU said
// first), the step's GEMM time against the trace's, the GEMMs ranked by their time per step with
// their share, explain's verdict and fix, and what is left out of the totals.
#pragma once
#include <ostream>
#include <string>

#include "views/profile.hpp"

namespace shapescope {

struct ProfileHtmlOptions {
  std::string command_line;  // the command that made the page, for its footer
  std::string version;       // shapescope's version line, for the footer
};

void write_profile_html(std::ostream& out, const ProfileResult& result, const ProfileHtmlOptions& options);

}  // namespace shapescope
