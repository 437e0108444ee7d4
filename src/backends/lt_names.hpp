// Text for the cuBLASLt algorithm-configuration enums (cublasLt.h) that LtAlgoConfig stores both as
// the raw value and as text. Values this build does not know print as "id<N>".
#pragma once
#include <string>

namespace shapescope {

// cublasLtMatmulTile_t: "256x128", "undefined"
std::string lt_tile_name(int id);
// cublasLtMatmulStages_t: "64x4", "64xauto", "undefined"
std::string lt_stages_name(int id);
// cublasLtClusterShape_t: "1x2x1", "auto"
std::string lt_cluster_name(int id);
// cublasLtReductionScheme_t: "none", "inplace", "compute", "output"
std::string lt_reduction_name(int id);

}  // namespace shapescope
