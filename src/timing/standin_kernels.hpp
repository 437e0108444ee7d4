// The stand-ins of a replayed step (timing/replay_plan.hpp): kernels that keep the GPU busy for a
// given time the way the step's other kernels did, so that the step's GEMMs run at the clock the
// step's power draw sets. Each runs until %globaltimer has moved by its length (the timer ticks
// every 32 ns to 1 us, by GPU: lengths of a few microseconds and up).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace shapescope {

// Memory traffic: `blocks` blocks of 256 threads read `buffer` (`bytes`, larger than L2 so that the
// reads reach device memory) with 16-byte loads, round and round, for `nanoseconds`. What
// elementwise kernels, normalizations and copies draw. `sink` (device memory, 4 bytes) is written
// only by a result that never happens, so that the compiler keeps the loads.
void launch_memory_work(const void* buffer, int64_t bytes, uint64_t nanoseconds, int blocks, unsigned* sink,
                        cudaStream_t stream);

// Tensor-core work: `blocks` blocks of 128 threads issue bf16 mma.sync on registers (no memory
// traffic) for `nanoseconds`. What attention kernels draw: compute-bound, like a GEMM without its
// operand traffic. Needs compute capability 8.0 or newer.
void launch_compute_work(uint64_t nanoseconds, int blocks, unsigned* sink, cudaStream_t stream);

// The GPU waiting: one thread sleeps for `nanoseconds` (what an idle gap in a step draws).
void launch_idle(uint64_t nanoseconds, cudaStream_t stream);

}  // namespace shapescope
