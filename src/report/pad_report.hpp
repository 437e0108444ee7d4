// `pad`'s report: the model, the step's GEMMs, the candidates and the recommendation per dimension,
// as text tables or one JSON document; and a dry run's estimate of what measuring would cost.
#pragma once
#include <ostream>

#include "views/pad.hpp"
#include "views/pad_sizes.hpp"

namespace shapescope {

void write_pad_text(std::ostream& out, const ModelConfig& config, const PadRequest& request, const PadResult& result);
void write_pad_json(std::ostream& out, const ModelConfig& config, const PadRequest& request, const PadResult& result);
// pad of a trace or GEMM list: the sizes, their candidates and the recommendation per size.
void write_pad_sizes_text(std::ostream& out, const PadRequest& request, const SizePadResult& result);
void write_pad_sizes_json(std::ostream& out, const PadRequest& request, const SizePadResult& result);
// On stderr in a dry run: the distinct GEMMs and a rough GPU time.
void write_pad_dry_run_cost(std::ostream& err, const PadRequest& request, const PadResult& result);

}  // namespace shapescope
