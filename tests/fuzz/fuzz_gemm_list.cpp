// Fuzz target: --gemms GEMM lists, CSV and JSON (parse_gemm_list, what load_gemm_list runs on the
// file's text), and the sizes pad and profile take from the workload.
#include "fuzz_input.hpp"
#include "model/gemm_list.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return shapescope::fuzz::refuse_cleanly([&] {
    const shapescope::Workload w = shapescope::parse_gemm_list(shapescope::fuzz::text(data, size), "--gemms: 'fuzz'");
    shapescope::dimension_knobs(w);
    shapescope::step_flops(w);
  });
}
