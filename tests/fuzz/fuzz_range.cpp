// Fuzz target: size ranges as users write them (--m, --n, --k, --batch, --tokens: parse_range) and
// --shard's I/N (parse_shard, take_shard).
#include "fuzz_input.hpp"
#include "shape/plan.hpp"
#include "shape/range.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = shapescope::fuzz::text(data, size);
  shapescope::fuzz::refuse_cleanly([&] { shapescope::parse_range(text, "--n"); });
  return shapescope::fuzz::refuse_cleanly([&] {
    const std::vector<shapescope::Problem> plan(3);
    shapescope::take_shard(plan, std::string(text));
  });
}
