// A step as its GPU ran it: the trace's kernels in time order, folded into segments a replay can
// reproduce (views/profile.cpp replays them to measure the step's GEMMs at the clock the step runs
// at): a GEMM call (one of the workload's calls, its kernels together), the other kernels between
// two GEMM calls (their summed time, and how much of it is attention, which keeps the tensor cores
// busy like a GEMM), and the GPU idle between kernels (the host was late: launch gaps, the optimizer,
// a synchronization). Pure C++: it reads kernel events, measures nothing.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shapescope {

struct TimelineSegment {
  enum class Kind { kGemm, kOtherKernels, kIdle };
  Kind kind = Kind::kGemm;
  size_t gemm = 0;          // kGemm: the call's index into Workload::gemms
  double us = 0;            // kGemm: the call's kernel time in the trace; otherwise the segment's length
  double attention_us = 0;  // kOtherKernels: the part of `us` that is attention kernels
};

struct StepTimeline {
  std::vector<TimelineSegment> segments;  // in the trace's time order, all its steps
  double span_us = 0;                     // first kernel's start to the last one's end
  double gemm_us() const;                 // sum of the GEMM segments
  double other_us() const;                // sum of the other kernels
  double idle_us() const;                 // sum of the idle segments
  size_t gemm_calls() const;
};

// One kernel of the trace: when it ran, how long, its name, and the GEMM call it belongs to (an index
// into Workload::gemms) where it is one's.
struct TimelineKernel {
  double ts = 0, dur = 0;
  std::string name;
  std::optional<size_t> gemm;
  std::optional<int64_t> call;    // the op that launched it (its External id): a call's kernels join
  std::optional<int64_t> correlation;  // its launch's correlation id
};

// Gaps shorter than this are the launch gaps a replay's graph has too: not an idle segment.
constexpr double kTimelineIdleFromUs = 5;

// The segments of the kernels (any order): consecutive kernels of one call are one GEMM segment;
// consecutive other kernels, one segment; a gap of kTimelineIdleFromUs or more between the end of
// everything so far and the next kernel, an idle segment. nullopt without a kernel of a GEMM call.
std::optional<StepTimeline> build_timeline(std::vector<TimelineKernel> kernels);

// Attention kernels by name (FlashAttention, cuDNN's and PyTorch's fused attention, xformers' fmha):
// compute-bound work a replay stands in for with tensor-core work, not memory traffic.
bool is_attention_kernel(std::string_view name);

}  // namespace shapescope
