// What the scale-out commands say: the merge of stores, and a sweep over several GPUs (the
// workers' GPUs and the summed summary). Every sentence here; the numbers come from store/merge
// and measure/workers.
#pragma once
#include <string>
#include <vector>

#include "store/merge.hpp"

namespace shapescope {

// The merge's lines: the first says what OUT holds now and how many points it replaced; one more
// for each input whose annotations were left out (another model version).
std::vector<std::string> merge_summary(const MergeResult& result, const std::string& out);

}  // namespace shapescope
