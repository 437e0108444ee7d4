// Fuzz target: explain's model prediction (`explain SHAPE --gpu KEY --tile BMxBN`, nothing measured),
// or a performance model's (`--predict`, a model fitted on synthetic bf16 nn points), for random valid shapes (square or MxNxK, mostly up to 65,536, with a dtype, layout, batch, padded
// rows or an offset), tiles (1..1024 each) and GPU profiles, written as text and JSON. The planner
// may refuse a shape in one line (exit 2); the explanation must name only its own points.
#include "fuzz_views.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shapescope;
  FuzzedDataProvider in(data, size);
  return fuzz::answer_or_refuse(
      [&] {
        ExplainRequest o;
        const ShapeOptions options = fuzz::shape_options(in);
        const GpuProfile& profile = fuzz::profile(in);
        o.tile = std::make_pair(in.ConsumeIntegralInRange<int>(1, 1024), in.ConsumeIntegralInRange<int>(1, 1024));
        if (in.ConsumeBool()) o.tile = std::make_pair(64 << in.ConsumeIntegralInRange<int>(0, 2), 64 << in.ConsumeIntegralInRange<int>(0, 2));
        const int64_t largest = fuzz::rarely(in, 8) ? (int64_t(1) << 24) : 65536;
        const bool square = in.ConsumeBool();
        const int64_t m = fuzz::size(in, largest);
        const int64_t n = square ? m : fuzz::size(in, largest), k = square ? m : fuzz::size(in, largest);
        o.shape = ShapeArg{m, n, k, square};
        o.shape_text = square ? std::to_string(n) : std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
        const Problem target = fuzz::explain_target(options, o);
        // Or a performance model's prediction (--predict): a class it lacks is refused (exit 3).
        if (in.ConsumeBool()) return fuzz::write_explanation(explain_predicted(o, fuzz::perf_model(), target, "fuzz"));
        fuzz::write_explanation(explain_model(o, profile, target, "fuzz"));
      },
      {ExitCode::kUsage, ExitCode::kNoGpu});
}
