// `profile`'s report: where the workload and the numbers come from, the GEMMs ranked by their time per
// step with explain's verdict, the total against the trace's GEMM kernel time, and what is missing,
// outside the total or not mapped; as text, or the same content as one JSON document.
#pragma once
#include <ostream>

#include "views/profile.hpp"

namespace shapescope {

void write_profile_text(std::ostream& out, const ProfileResult& result);
void write_profile_json(std::ostream& out, const ProfileResult& result);

}  // namespace shapescope
