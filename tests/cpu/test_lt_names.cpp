#include "backends/lt_names.hpp"

#include <cublasLt.h>
#include <gtest/gtest.h>

namespace shapescope {
namespace {

TEST(LtNames, Tiles) {
  EXPECT_EQ(lt_tile_name(CUBLASLT_MATMUL_TILE_256x128), "256x128");
  EXPECT_EQ(lt_tile_name(CUBLASLT_MATMUL_TILE_64x8), "64x8");
  EXPECT_EQ(lt_tile_name(CUBLASLT_MATMUL_TILE_UNDEFINED), "undefined");
}

TEST(LtNames, Stages) {
  EXPECT_EQ(lt_stages_name(CUBLASLT_MATMUL_STAGES_64x4), "64x4");
  EXPECT_EQ(lt_stages_name(CUBLASLT_MATMUL_STAGES_128xAUTO), "128xauto");
  EXPECT_EQ(lt_stages_name(CUBLASLT_MATMUL_STAGES_UNDEFINED), "undefined");
}

TEST(LtNames, Clusters) {
  EXPECT_EQ(lt_cluster_name(CUBLASLT_CLUSTER_SHAPE_1x2x1), "1x2x1");
  EXPECT_EQ(lt_cluster_name(CUBLASLT_CLUSTER_SHAPE_2x1x1), "2x1x1");
  EXPECT_EQ(lt_cluster_name(CUBLASLT_CLUSTER_SHAPE_AUTO), "auto");
}

TEST(LtNames, ReductionSchemes) {
  EXPECT_EQ(lt_reduction_name(CUBLASLT_REDUCTION_SCHEME_NONE), "none");
  EXPECT_EQ(lt_reduction_name(CUBLASLT_REDUCTION_SCHEME_INPLACE), "inplace");
  EXPECT_EQ(lt_reduction_name(CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE), "compute");
  EXPECT_EQ(lt_reduction_name(CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE), "output");
}

TEST(LtNames, UnknownValuesShowTheNumber) {
  EXPECT_EQ(lt_tile_name(CUBLASLT_MATMUL_TILE_END),
            "id" + std::to_string(CUBLASLT_MATMUL_TILE_END));
  EXPECT_EQ(lt_stages_name(29), "id29");  // a gap in cublasLtMatmulStages_t
  EXPECT_EQ(lt_cluster_name(1), "id1");   // a gap in cublasLtClusterShape_t
  EXPECT_EQ(lt_reduction_name(CUBLASLT_REDUCTION_SCHEME_MASK), "id7");
  EXPECT_EQ(lt_tile_name(-1), "id-1");
}

}  // namespace
}  // namespace shapescope
