// Fuzz target: Hugging Face config.json (parse_model_config, what --config and --model read), then
// the GEMMs of one training step the way pad (step_gemms) and profile (config_workload) list them.
#include "fuzz_input.hpp"
#include "model/config_workload.hpp"
#include "model/model_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return shapescope::fuzz::refuse_cleanly([&] {
    const shapescope::ModelConfig c = shapescope::parse_model_config(shapescope::fuzz::text(data, size), "--config: 'fuzz'");
    shapescope::StepOptions step;
    step.tokens = 4096;
    step.train = true;
    shapescope::step_gemms(c, step);
    shapescope::WorkloadRequest request;
    request.tokens = 4096;
    request.train = true;
    shapescope::config_workload(c, request);
  });
}
