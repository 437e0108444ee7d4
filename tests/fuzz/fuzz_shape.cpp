// Fuzz target: explain's SHAPE ("1793", "4096x1x4096": parse_shape) and --tile ("256x128":
// parse_tile); both answer nullopt for anything else, and must never crash.
#include "fuzz_input.hpp"
#include "model/explain.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = shapescope::fuzz::text(data, size);
  return shapescope::fuzz::refuse_cleanly([&] {
    const std::optional<shapescope::ShapeArg> shape = shapescope::parse_shape(text);
    if (shape && (shape->m < 1 || shape->n < 1 || shape->k < 1)) std::abort();
    const std::optional<std::pair<int, int>> tile = shapescope::parse_tile(text);
    if (tile && (tile->first < 1 || tile->second < 1)) std::abort();
  });
}
