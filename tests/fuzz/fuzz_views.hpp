// What the fuzz targets of the views share (libFuzzer; scripts/fuzz.sh): valid inputs drawn from the
// fuzzer's bytes (shapes, tiles, GPU profiles, small stores of random points with real kernel
// names), and the outcomes that are not findings. A view may refuse what it is given only with
// shapescope::Error on one line with one of the codes the CLI documents for it; a crash, a sanitizer
// report, another exception type or a multi-line message is a finding (abort() keeps the input).
#pragma once
#include <fuzzer/FuzzedDataProvider.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <sstream>

#include "common/error.hpp"
#include "core/backend_kind.hpp"
#include "core/device_context.hpp"
#include "core/records.hpp"
#include "model/device_profile.hpp"
#include "model/perf_predict.hpp"
#include "shape/plan.hpp"
#include "report/explain_report.hpp"
#include "store/store.hpp"
#include "views/explain.hpp"

namespace shapescope::fuzz {

// A performance model of bf16 nn GEMMs (rows 16- and 2-byte aligned; two kernels; the launch floor)
// fitted once on synthetic points: what explain --predict reads, without a file.
inline const std::shared_ptr<const GpuPerfModel>& perf_model() {
  static const std::shared_ptr<const GpuPerfModel> model = [] {
    PerfSampleSet set;
    set.gpu = "NVIDIA H100 80GB HBM3";
    set.sm_count = 132;
    const auto packed = [](int64_t m, int64_t n, int64_t k) {
      Problem p;
      p.m = m, p.n = n, p.k = k, p.lda = k, p.ldb = n, p.ldc = n;
      return p;
    };
    for (int64_t k = 16; k <= 160; k += 16) set.samples.push_back({packed(16, 16, k), 6.0, 64, 64, 1, 132});
    for (int64_t m = 256; m <= 8192; m *= 2)
      for (int64_t n : {1024, 1023, 4096, 4095})
        for (int64_t k : {512, 4096}) {
          const bool aligned = n % 8 == 0;
          const int64_t rounds = ((m + 127) / 128 * ((n + 255) / 256) + 131) / 132;
          set.samples.push_back({packed(m, n, k), 6 + double(rounds) * 2.0 * 128 * 256 * double(k) / ((aligned ? 700e6 : 175e6) / 132),
                                 aligned ? 128 : 256, aligned ? 256 : 128, 1, 132});
        }
    auto out = std::make_shared<GpuPerfModel>();
    out->model = fit_perf_model(set, "fuzz");
    out->file = "fuzz";
    return out;
  }();
  return model;
}

// Runs `view`; an Error with one of `codes` on one line is a refusal, anything else thrown a finding.
template <class View>
int answer_or_refuse(View&& view, std::initializer_list<ExitCode> codes) {
  try {
    view();
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.empty() || what.find('\n') != std::string::npos ||
        std::find(codes.begin(), codes.end(), e.code()) == codes.end()) {
      std::fprintf(stderr, "finding: exit code %d, message '%s'\n", int(e.code()), e.what());
      std::abort();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "finding: %s\n", e.what());
    std::abort();
  }
  return 0;
}

// True once in `one_in` draws; false when the input is used up (the provider then gives its minimum).
inline bool rarely(FuzzedDataProvider& in, int one_in) { return in.ConsumeIntegralInRange<int>(1, one_in) == one_in; }

// A size: mostly one the model treats apart (a power of two or a multiple of 8..256, +-1), else any
// from 1 to `largest`.
inline int64_t size(FuzzedDataProvider& in, int64_t largest = 65536) {
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: return in.ConsumeIntegralInRange<int64_t>(1, largest);
    case 1: return std::clamp<int64_t>(int64_t(1) << in.ConsumeIntegralInRange<int>(0, 16), 1, largest);
    default: {
      const int64_t step = int64_t(8) << in.ConsumeIntegralInRange<int>(0, 5);
      const int64_t n = step * in.ConsumeIntegralInRange<int64_t>(1, std::max<int64_t>(1, largest / step)) +
                        in.ConsumeIntegralInRange<int>(-1, 1);
      return std::clamp<int64_t>(n, 1, largest);
    }
  }
}

inline const char* pick(FuzzedDataProvider& in, std::initializer_list<const char*> items) {
  return items.begin()[in.ConsumeIntegralInRange<size_t>(0, items.size() - 1)];
}

// A problem's options as the CLI's take them: dtype, layout, batch, padded rows or an offset.
inline ShapeOptions shape_options(FuzzedDataProvider& in) {
  ShapeOptions s;
  s.dtype = pick(in, {"bf16", "bf16", "fp16", "fp32", "tf32", "fp8"});
  s.layout = pick(in, {"nn", "nn", "nt", "tn", "tt"});
  s.batch = std::to_string(in.ConsumeBool() ? 1 : in.ConsumeIntegralInRange<int>(1, 8));
  if (rarely(in, 8)) s.ld_pad = in.ConsumeIntegralInRange<int64_t>(0, 64);
  if (rarely(in, 8)) s.offset = in.ConsumeIntegralInRange<int64_t>(0, 16);
  return s;
}

// One problem planned as sweep plans it (throws Error(kUsage) for what the planner refuses).
inline Problem problem(FuzzedDataProvider& in, const ShapeOptions& options, int64_t largest = 65536) {
  ShapeOptions s = options;
  s.m = std::to_string(size(in, largest));
  s.n = std::to_string(size(in, largest));
  s.k = std::to_string(size(in, largest));
  return plan_problems(s).front();
}

// explain's target for the request's shape in the options' form, read as the CLI reads them (fills
// o.form; Error(kUsage) for what the planner refuses, a batch of several values too).
inline Problem explain_target(const ShapeOptions& options, ExplainRequest& o) {
  SizePlan plan = plan_size(options, o.shape.m, o.shape.n, o.shape.k, "SHAPE");
  if (plan.problems.size() != 1) throw usage_error("--batch: must be one value for explain");
  o.form = plan.form;
  return plan.problems.front();
}

inline const GpuProfile& profile(FuzzedDataProvider& in) {
  const std::vector<GpuProfile>& all = gpu_profiles();
  return all[in.ConsumeIntegralInRange<size_t>(0, all.size() - 1)];
}

// A GPU as a store records it: a profile's product (or one no profile knows), its SM count.
inline DeviceContext device(FuzzedDataProvider& in) {
  DeviceContext d;
  const int which = in.ConsumeIntegralInRange<int>(0, 3);
  d.gpu_name = which == 0 ? "NVIDIA H100 80GB HBM3" : which == 1 ? "NVIDIA H200" : which == 2 ? "NVIDIA A100-SXM4-80GB"
                                                                                            : "Some Future GPU";
  d.gpu_uuid = "GPU-fuzz-" + std::to_string(which);
  d.sm_count = which == 2 ? 108 : which == 3 ? in.ConsumeIntegralInRange<int>(1, 256) : 132;
  d.cc_major = which == 2 ? 8 : 9;
  d.l2_bytes = int64_t(50) << 20;
  d.max_sm_clock_mhz = 1980;
  d.driver = "580.0";
  d.cuda_runtime = "13.0";
  d.cublas = d.cublaslt = "13.1.0";
  return d;
}

// The kernels a call launched: real names of cuBLAS's, cuBLASLt's and our kernels, random grids.
inline std::vector<KernelRecord> kernels(FuzzedDataProvider& in) {
  std::vector<KernelRecord> out;
  const int count = in.ConsumeIntegralInRange<int>(0, 2);
  for (int i = 0; i < count; ++i) {
    KernelRecord k;
    k.name = pick(in, {"nvjet_sm90_tst_256x128_64x4_1x4_h_bz_coopA_NNT", "nvjet_sm90_tst_192x144_64x5_2x1_v_bz_coopB_NNT",
                       "void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1>"
                       "(cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1::Params)",
                       "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_128x256_64x3_nn_align2>"
                       "(cutlass_80_tensorop_bf16_s16816gemm_bf16_128x256_64x3_nn_align2::Params)",
                       "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
                       "ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x4_nn", "splitKreduce_kernel",
                       "shapescope_empty_kernel()", "some_unknown_kernel"});
    k.grid_x = in.ConsumeIntegralInRange<uint32_t>(1, 4096);
    k.grid_y = in.ConsumeIntegralInRange<uint32_t>(1, 256);
    k.grid_z = in.ConsumeIntegralInRange<uint32_t>(1, 8);
    k.block_x = 32 * in.ConsumeIntegralInRange<uint32_t>(1, 32);
    k.block_y = k.block_z = 1;
    k.cluster_x = k.cluster_y = k.cluster_z = in.ConsumeBool() ? 1 : 0;
    k.registers = in.ConsumeIntegralInRange<int>(16, 255);
    k.dynamic_smem = in.ConsumeIntegralInRange<int64_t>(0, 232448);
    k.duration_us = in.ConsumeFloatingPointInRange<double>(0.5, 1e5);
    out.push_back(k);
  }
  return out;
}

// A positive, finite median and the statistics around it.
inline PointResult result(FuzzedDataProvider& in) {
  PointResult r;
  const double median = in.ConsumeFloatingPointInRange<double>(0.5, 1e6);
  r.timing.median_us = median;
  r.timing.min_us = median * in.ConsumeFloatingPointInRange<double>(0.5, 1);
  r.timing.q1_us = median * in.ConsumeFloatingPointInRange<double>(0.8, 1);
  r.timing.q3_us = median * in.ConsumeFloatingPointInRange<double>(1, 1.2);
  r.timing.max_us = r.timing.q3_us * in.ConsumeFloatingPointInRange<double>(1, 2);
  r.timing.noise = (r.timing.q3_us - r.timing.q1_us) / median;
  r.timing.samples = in.ConsumeIntegralInRange<int>(3, 200);
  if (in.ConsumeBool()) r.timing.sm_clock_mhz = in.ConsumeFloatingPointInRange<double>(200, 2200);
  r.timing.throttled = rarely(in, 8);
  r.measured_at = "2026-11-" + std::to_string(in.ConsumeIntegralInRange<int>(10, 28)) + "T00:00:00Z";
  r.command = "fuzz";
  return r;
}

// A store in a temporary file (TMPDIR), removed with its SQLite files by the destructor.
class TemporaryStore {
 public:
  TemporaryStore() {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir && *dir ? dir : "/tmp") + "/shapescope-fuzz-" + std::to_string(getpid()) + ".db";
    remove_files();
  }
  ~TemporaryStore() { remove_files(); }
  TemporaryStore(const TemporaryStore&) = delete;
  TemporaryStore& operator=(const TemporaryStore&) = delete;
  const std::string& path() const { return path_; }

  // Fills it with up to `most` points: some near `around` (its size neighbours, our kernels and
  // cuBLASLt's algorithms at it), the rest anywhere; every point of one GPU, or of two.
  void fill(FuzzedDataProvider& in, const ShapeOptions& options, const Problem& around, size_t most) {
    fill(in, options, std::vector<Problem>{around}, most);
  }
  // The same around several problems (a step's GEMMs), each point near one of them.
  void fill(FuzzedDataProvider& in, const ShapeOptions& options, const std::vector<Problem>& problems, size_t most) {
    Store store(path_);
    const DeviceContext first = device(in), second = device(in);
    const size_t count = in.ConsumeIntegralInRange<size_t>(1, most);
    size_t saved = 0;
    for (size_t i = 0; i < count && in.remaining_bytes() > 0; ++i) {
      const Problem& around = problems[in.ConsumeIntegralInRange<size_t>(0, problems.size() - 1)];
      Problem p = around;
      // The first point is the one asked about, as a sweep stores it (cuBLAS, cold, sustained).
      if (i == 0 && !rarely(in, 4)) {
        store.save_points(first, {PointToSave{PointKey{BackendKind::kCublas, "default", p, false}, result(in), kernels(in)}});
        ++saved;
        continue;
      }
      const int how = in.ConsumeIntegralInRange<int>(0, 3);
      if (how == 1) {
        ShapeOptions s = options;
        s.m = std::to_string(std::max<int64_t>(1, around.m + in.ConsumeIntegralInRange<int>(-300, 300)));
        s.n = std::to_string(std::max<int64_t>(1, around.n + in.ConsumeIntegralInRange<int>(-300, 300)));
        s.k = std::to_string(std::max<int64_t>(1, around.k + in.ConsumeIntegralInRange<int>(-300, 300)));
        try {
          p = plan_problems(s).front();
        } catch (const Error&) {
          continue;
        }
      } else if (how == 2) {
        try {
          p = problem(in, options, 8192);
        } catch (const Error&) {
          continue;
        }
      }
      PointKey key{BackendKind::kCublas, "default", p, rarely(in, 10)};
      const int backend = in.ConsumeIntegralInRange<int>(0, 5);
      if (backend == 1) key = PointKey{BackendKind::kCublasLt, "h" + std::to_string(in.ConsumeIntegralInRange<int>(0, 3)), p, false};
      if (backend == 2) key = PointKey{BackendKind::kCustom, pick(in, {"05_wgmma_tma:128x256:dp", "04_mma_pipelined:128x128:dp"}), p, false};
      if (rarely(in, 6)) key.clocks = ClockState::kBurst;
      PointToSave point{key, result(in), kernels(in)};
      store.save_points(rarely(in, 4) ? second : first, {point});
      ++saved;
    }
    // At least one point: the file exists (a missing store is the CLI's refusal, not the view's).
    if (saved == 0)
      store.save_points(first, {PointToSave{PointKey{BackendKind::kCublas, "default", problems.front(), false}, result(in), {}}});
  }

 private:
  void remove_files() const {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path_ + suffix).c_str());
  }
  std::string path_;
};

// An explanation as the CLI writes it, text and JSON: every index it holds names one of its points,
// and the JSON is a document.
inline void write_explanation(const ExplainReport& r) {
  const size_t n = r.points.size();
  if (n == 0) std::abort();
  const Explanation& e = r.explanation;
  for (const Effect& x : e.effects)
    for (size_t i : x.evidence.indices())
      if (i >= n) std::abort();
  for (const Fix& f : e.fixes)
    if ((f.point && *f.point >= n) || (f.copy && *f.copy >= n)) std::abort();
  for (const std::optional<size_t>& i : {e.verdict.against, e.verdict.floor, e.reference.best_aligned, e.reference.best_alternative})
    if (i && *i >= n) std::abort();
  std::ostringstream text, json;
  write_explain_text(text, r);
  write_explain_json(json, r);
  (void)nlohmann::json::parse(json.str());  // throws (a finding) when it is not JSON
  explain_verdict_line(r);
  explain_fix_line(r);
}

}  // namespace shapescope::fuzz
