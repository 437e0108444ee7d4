#include "trace/kernel_trace.hpp"

#include <cuda_runtime_api.h>
#include <cupti.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "common/check.hpp"
#include "common/error.hpp"
#include "trace/demangle.hpp"

namespace shapescope {
namespace {

// The newest kernel record layout in this toolkit's cupti_activity.h (CUDA 13.0, CUPTI API
// 130001): CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL records are CUpti_ActivityKernel10.
using KernelActivity = CUpti_ActivityKernel10;

// CUPTI's guide suggests buffers of 1 to 10 MB; 8 MiB holds tens of thousands of records, so the
// flush in collect() rather than a full buffer is what normally hands records back.
constexpr size_t kBufferBytes = 8u << 20;
constexpr size_t kBufferAlignment = 8;  // ACTIVITY_RECORD_ALIGNMENT

constexpr CUpti_ExternalCorrelationKind kTagKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;

// External correlation records are written only next to driver/runtime API records, so without
// the two API kinds no kernel could be tied to a tag. Both are needed: on an H200 with cuBLAS 13.1,
// xmma and split-K reduction kernels came through the runtime API, nvjet and cutlass kernels
// through the driver API.
constexpr CUpti_ActivityKind kTracedKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_RUNTIME,
};

struct TracedKernel {
  uint32_t correlation_id = 0;
  uint64_t start_ns = 0;
  KernelRecord record;
};

// CUPTI hands records to plain C callbacks, so what they collect lives here rather than in the
// KernelTrace object; `owner` is the one live KernelTrace (null when none exists).
struct TraceState {
  std::mutex mutex;
  const KernelTrace* owner = nullptr;
  bool callbacks_registered = false;
  std::vector<TracedKernel> kernels;
  std::unordered_map<uint32_t, uint64_t> tag_by_correlation;
  size_t dropped_records = 0;
  std::string parse_error;

  void clear() {
    kernels.clear();
    tag_by_correlation.clear();
    dropped_records = 0;
    parse_error.clear();
  }
};

TraceState& state() {
  static TraceState instance;
  return instance;
}

TracedKernel to_traced_kernel(const KernelActivity& activity) {
  TracedKernel kernel;
  kernel.correlation_id = activity.correlationId;
  kernel.start_ns = activity.start;
  KernelRecord& record = kernel.record;
  record.name = demangle(activity.name);
  record.grid_x = static_cast<uint32_t>(activity.gridX);
  record.grid_y = static_cast<uint32_t>(activity.gridY);
  record.grid_z = static_cast<uint32_t>(activity.gridZ);
  record.block_x = static_cast<uint32_t>(activity.blockX);
  record.block_y = static_cast<uint32_t>(activity.blockY);
  record.block_z = static_cast<uint32_t>(activity.blockZ);
  record.cluster_x = activity.clusterX;
  record.cluster_y = activity.clusterY;
  record.cluster_z = activity.clusterZ;
  record.registers = activity.registersPerThread;
  record.static_smem = activity.staticSharedMemory;
  record.dynamic_smem = activity.dynamicSharedMemory;
  // Zero timestamps mean CUPTI could not time the kernel (it ran out of device memory for them).
  if (activity.start != 0 && activity.end > activity.start) {
    record.duration_us = static_cast<double>(activity.end - activity.start) / 1000.0;
  }
  return kernel;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_size) {
  std::vector<TracedKernel> kernels;
  std::vector<std::pair<uint32_t, uint64_t>> tags;
  std::string parse_error;
  CUpti_Activity* record = nullptr;
  while (buffer != nullptr) {
    const CUptiResult status = cuptiActivityGetNextRecord(buffer, valid_size, &record);
    if (status == CUPTI_ERROR_MAX_LIMIT_REACHED) break;  // end of the buffer
    if (status != CUPTI_SUCCESS) {
      parse_error = "cuptiActivityGetNextRecord failed: " + detail::cupti_error_text(status);
      break;
    }
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      kernels.push_back(to_traced_kernel(*reinterpret_cast<const KernelActivity*>(record)));
    } else if (record->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
      const auto* correlation = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
      if (correlation->externalKind == kTagKind) {
        tags.emplace_back(correlation->correlationId, correlation->externalId);
      }
    }
  }
  std::free(buffer);

  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) != CUPTI_SUCCESS) dropped = 0;

  TraceState& trace = state();
  std::lock_guard<std::mutex> lock(trace.mutex);
  // Records that arrive while no KernelTrace exists (its destructor's final flush) are nobody's.
  if (trace.owner == nullptr) return;
  for (TracedKernel& kernel : kernels) trace.kernels.push_back(std::move(kernel));
  for (const auto& [correlation_id, tag] : tags) trace.tag_by_correlation[correlation_id] = tag;
  trace.dropped_records += dropped;
  if (trace.parse_error.empty()) trace.parse_error = parse_error;
}

void disable_kinds(size_t count) {
  for (size_t i = 0; i < count; ++i) cuptiActivityDisable(kTracedKinds[i]);
}

}  // namespace

KernelTrace::KernelTrace() {
  TraceState& trace = state();
  {
    std::lock_guard<std::mutex> lock(trace.mutex);
    if (trace.owner != nullptr) {
      throw Error(ExitCode::kInternal, "only one KernelTrace may exist at a time");
    }
    trace.owner = this;
    trace.clear();
  }
  size_t enabled = 0;
  try {
    bool registered = false;
    {
      std::lock_guard<std::mutex> lock(trace.mutex);
      registered = trace.callbacks_registered;
    }
    // The callbacks are the same functions every time, so they are registered once per process.
    if (!registered) {
      CHECK_CUPTI(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
      std::lock_guard<std::mutex> lock(trace.mutex);
      trace.callbacks_registered = true;
    }
    for (const CUpti_ActivityKind kind : kTracedKinds) {
      CHECK_CUPTI(cuptiActivityEnable(kind));
      ++enabled;
    }
  } catch (...) {
    disable_kinds(enabled);
    std::lock_guard<std::mutex> lock(trace.mutex);
    trace.owner = nullptr;
    throw;
  }
}

KernelTrace::~KernelTrace() {
  // Errors are ignored here: a destructor must not throw, and nothing would read the records.
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  disable_kinds(std::size(kTracedKinds));
  TraceState& trace = state();
  std::lock_guard<std::mutex> lock(trace.mutex);
  trace.owner = nullptr;
  trace.clear();
}

void KernelTrace::push(uint64_t tag) {
  CHECK_CUPTI(cuptiActivityPushExternalCorrelationId(kTagKind, tag));
}

void KernelTrace::pop() {
  uint64_t tag = 0;
  CHECK_CUPTI(cuptiActivityPopExternalCorrelationId(kTagKind, &tag));
}

std::map<uint64_t, std::vector<KernelRecord>> KernelTrace::collect() {
  CHECK_CUDA(cudaDeviceSynchronize());
  // Forced: also hand back buffers that are not full yet. The completion callback may run on
  // this thread inside the call, so the state's mutex must not be held here.
  CHECK_CUPTI(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));

  std::vector<TracedKernel> kernels;
  std::unordered_map<uint32_t, uint64_t> tag_by_correlation;
  size_t dropped_records = 0;
  std::string parse_error;
  {
    TraceState& trace = state();
    std::lock_guard<std::mutex> lock(trace.mutex);
    kernels = std::move(trace.kernels);
    tag_by_correlation = std::move(trace.tag_by_correlation);
    dropped_records = trace.dropped_records;
    parse_error = std::move(trace.parse_error);
    trace.clear();
  }
  if (dropped_records > 0) {
    throw Error(ExitCode::kInternal, "CUPTI dropped " + std::to_string(dropped_records) +
                                         " activity records; the kernel list would be incomplete");
  }
  if (!parse_error.empty()) throw Error(ExitCode::kInternal, parse_error);

  std::stable_sort(kernels.begin(), kernels.end(),
                   [](const TracedKernel& a, const TracedKernel& b) {
                     return a.start_ns != b.start_ns ? a.start_ns < b.start_ns
                                                     : a.correlation_id < b.correlation_id;
                   });
  std::map<uint64_t, std::vector<KernelRecord>> by_tag;
  for (TracedKernel& kernel : kernels) {
    const auto tag = tag_by_correlation.find(kernel.correlation_id);
    if (tag == tag_by_correlation.end()) continue;  // launched outside any push/pop
    by_tag[tag->second].push_back(std::move(kernel.record));
  }
  return by_tag;
}

}  // namespace shapescope
