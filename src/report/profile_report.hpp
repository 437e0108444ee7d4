// `profile`'s report: where the workload and the numbers come from, the GEMMs ranked by their time per
// step with explain's verdict, the total against the trace's GEMM kernel time, and what is missing,
// outside the total or not mapped; as text, or the same content as one JSON document.
#pragma once
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "views/profile.hpp"

namespace shapescope {

void write_profile_text(std::ostream& out, const ProfileResult& result);
void write_profile_json(std::ostream& out, const ProfileResult& result);

// A profile's sentences, as every form (text, JSON, the HTML page) says them.
struct ProfileText {
  std::string source;                    // the workload: its GEMMs, calls, the GPU a trace was recorded on
  std::string numbers;                   // where the times come from: measured now, or the store
  std::optional<std::string> other_gpu;  // a trace recorded on another GPU than the times: said first
  std::optional<std::string> outside;    // the trace's kernels of ops that are not GEMMs: said once
  std::string total;                     // the step's GEMM time, against the trace's
  std::vector<std::string> lists;        // grouped calls, not measured, no verdict, not mapped, notes, skipped
};
ProfileText profile_text(const ProfileResult& result);
// "12288x50257x768 nt bf16", with what the source could not say ("[fused]", estimated rows).
std::string profile_gemm_cell(const ProfileResult& result, const ProfileEntry& entry);

}  // namespace shapescope
