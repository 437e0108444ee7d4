// Fuzz target: explain from a store (no GPU here: `explain SHAPE --db S [--gpu KEY] [--clocks C]`)
// with a small random store: points at the target, at sizes near it and anywhere, of one or two
// GPUs, cuBLAS, cuBLASLt algorithms and our kernels, cold and hot, sustained and burst, with real
// kernel names; written as text and JSON. Refusals: a bad shape (exit 2), nothing stored (exit 3).
#include "fuzz_views.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shapescope;
  FuzzedDataProvider in(data, size);
  fuzz::TemporaryStore store;
  return fuzz::answer_or_refuse(
      [&] {
        ExplainRequest o;
        const ShapeOptions options = fuzz::shape_options(in);
        const bool square = in.ConsumeBool();
        const int64_t m = fuzz::size(in, 16384);
        const int64_t n = square ? m : fuzz::size(in, 16384), k = square ? m : fuzz::size(in, 16384);
        o.shape = ShapeArg{m, n, k, square};
        o.shape_text = square ? std::to_string(n) : std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
        const Problem target = fuzz::explain_target(options, o);
        store.fill(in, options, target, 24);
        o.db = store.path();
        if (fuzz::rarely(in, 4)) o.backend = BackendSpec(BackendKind::kCublasLt);
        o.clocks_given = in.ConsumeBool();
        o.measure.clocks = in.ConsumeBool() ? ClockState::kSustained : ClockState::kBurst;
        const GpuProfile* profile = in.ConsumeBool() ? &fuzz::profile(in) : nullptr;
        if (profile && fuzz::rarely(in, 4)) o.tile = std::make_pair(128, 256);
        fuzz::write_explanation(explain_without_gpu(o, profile, target));
      },
      {ExitCode::kUsage, ExitCode::kNoGpu});
}
