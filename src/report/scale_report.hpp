// What the scale-out commands say: the merge of stores, and a sweep over several GPUs (the
// workers' GPUs and the summed summary). Every sentence here; the numbers come from store/merge
// and measure/workers.
#pragma once
#include <string>
#include <vector>

#include "measure/workers.hpp"
#include "store/merge.hpp"

namespace shapescope {

// The merge's one line (README, docs/commands.md): what OUT holds now and how many points it
// replaced; at its end, inputs read through upgraded copies and annotations left out (another model
// version). A vector of that one line.
std::vector<std::string> merge_summary(const MergeResult& result, const std::string& out);

// A sweep's last line on stderr: measured, reused, annotated, wall time, GPU-time floor, clock,
// noisy and throttled points. `gpus` > 1: a --devices sweep (the floor is the busiest GPU's; each
// GPU's clock is on its own line, worker_summary).
std::string sweep_summary(const SweepTotals& totals, double wall_s, bool hot, size_t gpus);
// What an interrupted sweep kept, and how to go on.
std::string interrupted_line(size_t measured, const std::string& db, const std::string& out);
// A --devices worker that failed: its GPU, how it ended, and the chunk it left unmeasured.
std::string worker_failure(const Worker& worker);
// A --devices worker's line: its GPU, chunks, problems, points, time, its own median SM clock.
std::string worker_summary(const Worker& worker);

}  // namespace shapescope
