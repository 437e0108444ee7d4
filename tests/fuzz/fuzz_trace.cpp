// Fuzz target: --trace PyTorch profiler traces (parse_torch_trace, what load_torch_trace runs on the
// file's text), and the sizes pad and profile take from the workload.
#include "fuzz_input.hpp"
#include "model/trace_import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return shapescope::fuzz::refuse_cleanly([&] {
    const shapescope::Workload w = shapescope::parse_torch_trace(shapescope::fuzz::text(data, size), "--trace: 'fuzz'");
    shapescope::dimension_knobs(w);
    shapescope::step_flops(w);
  });
}
