// Reading a GEMM's tile from its kernel name: real names from cuBLAS/cuBLASLt/CUTLASS, what
// describe() prints for them, and that anything else (garbage, truncated or huge names) gives
// known=false and never a guessed tile.
#include "model/kernel_name.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace shapescope {
namespace {

struct Expected {
  const char* name;
  const char* family;
  bool known;
  bool auxiliary;
  int sm;
  int tile_m, tile_n, tile_k, stages;
  int cluster_m, cluster_n, cluster_k;
  int align;
  const char* instruction;
  const char* layout;
  const char* schedule;
};

// Rows marked "H200" were seen on an H200 with cuBLAS 13.1 (bf16 GEMMs over many shapes).
const std::vector<Expected> kTable = {
    // H200: nvjet, with and without a coop token, both h and v.
    {"nvjet_sm90_tst_256x128_64x4_1x4_h_bz_coopA_NNT", "nvjet", true, false, 90, 256, 128, 64, 4, 1,
     4, 1, 0, "", "NNT", "coopA"},
    {"nvjet_sm90_tst_64x8_64x16_1x1_h_bz_NNT", "nvjet", true, false, 90, 64, 8, 64, 16, 1, 1, 1, 0,
     "", "NNT", ""},
    {"nvjet_sm90_tst_64x8_64x16_4x2_h_bz_NNT", "nvjet", true, false, 90, 64, 8, 64, 16, 4, 2, 1, 0,
     "", "NNT", ""},
    {"nvjet_sm90_tst_32x64_64x16_4x1_v_bz_NNN", "nvjet", true, false, 90, 32, 64, 64, 16, 4, 1, 1,
     0, "", "NNN", ""},
    {"nvjet_sm90_tst_64x48_64x15_2x4_h_bz_NNT", "nvjet", true, false, 90, 64, 48, 64, 15, 2, 4, 1,
     0, "", "NNT", ""},
    {"nvjet_sm90_tst_96x64_64x8_2x4_h_bz_NNN", "nvjet", true, false, 90, 96, 64, 64, 8, 2, 4, 1, 0,
     "", "NNN", ""},
    {"nvjet_sm90_tst_128x192_64x5_2x1_v_bz_coopB_NNN", "nvjet", true, false, 90, 128, 192, 64, 5, 2,
     1, 1, 0, "", "NNN", "coopB"},
    {"nvjet_sm90_tst_160x192_64x3_1x1_h_bz_coopB_NNN", "nvjet", true, false, 90, 160, 192, 64, 3, 1,
     1, 1, 0, "", "NNN", "coopB"},
    {"nvjet_sm90_tst_192x208_64x4_1x1_h_bz_coopB_NNT", "nvjet", true, false, 90, 192, 208, 64, 4, 1,
     1, 1, 0, "", "NNT", "coopB"},
    {"nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT", "nvjet", true, false, 90, 320, 128, 64, 3, 1,
     2, 1, 0, "", "NNT", "coopB"},
    {"nvjet_sm90_tst_128x304_64x3_2x1_v_bz_coopA_NNT", "nvjet", true, false, 90, 128, 304, 64, 3, 2,
     1, 1, 0, "", "NNT", "coopA"},
    {"nvjet_sm90_tst_256x80_64x5_1x1_h_bz_NNT", "nvjet", true, false, 90, 256, 80, 64, 5, 1, 1, 1,
     0, "", "NNT", ""},
    {"nvjet_sm90_tst_128x160_64x5_2x1_v_bz_NNT", "nvjet", true, false, 90, 128, 160, 64, 5, 2, 1, 1,
     0, "", "NNT", ""},
    // H200: CUTLASS 2 kernels inside cuBLAS, wrapped in cutlass::Kernel2.
    {"void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_32x2_nn_align2>"
     "(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_32x2_nn_align2::Params)",
     "cutlass2", true, false, 80, 32, 32, 32, 2, 1, 1, 1, 2, "161616", "nn", ""},
    {"void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_nn_align2>"
     "(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_nn_align2::Params)",
     "cutlass2", true, false, 80, 16, 16, 128, 2, 1, 1, 1, 2, "161616", "nn", ""},
    {"void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x1_nn_align2>"
     "(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x1_nn_align2::Params)",
     "cutlass2", true, false, 80, 32, 32, 128, 1, 1, 1, 1, 2, "161616", "nn", ""},
    {"void cutlass::Kernel2<cutlass_75_tensorop_s1688gemm_bf16_64x64_nn_align1>"
     "(cutlass_75_tensorop_s1688gemm_bf16_64x64_nn_align1::Params)",
     "cutlass2", true, false, 75, 64, 64, 0, 0, 1, 1, 1, 1, "1688", "nn", ""},
    // Also asked about in NVIDIA/cutlass#2286.
    {"void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1>"
     "(cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1::Params)",
     "cutlass2", true, false, 75, 256, 128, 0, 0, 1, 1, 1, 1, "1688", "nn", ""},
    {"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_64x64_32x6_nn_align2>"
     "(cutlass_80_tensorop_bf16_s16816gemm_bf16_64x64_32x6_nn_align2::Params)",
     "cutlass2", true, false, 80, 64, 64, 32, 6, 1, 1, 1, 2, "16816", "nn", ""},
    {"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_256x128_32x3_nn_align2>"
     "(cutlass_80_tensorop_bf16_s16816gemm_bf16_256x128_32x3_nn_align2::Params)",
     "cutlass2", true, false, 80, 256, 128, 32, 3, 1, 1, 1, 2, "16816", "nn", ""},
    {"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_128x256_64x3_nn_align2>"
     "(cutlass_80_tensorop_bf16_s16816gemm_bf16_128x256_64x3_nn_align2::Params)",
     "cutlass2", true, false, 80, 128, 256, 64, 3, 1, 1, 1, 2, "16816", "nn", ""},
    // H200: helper kernels. Their template numbers are undocumented: no tile is read.
    {"void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, "
     "false, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, true, false, false, false>"
     "(cublasLt::cublasSplitKParams<float>, float const*, __nv_bfloat16 const*, __nv_bfloat16*, "
     "__nv_bfloat16*, float const*, float const*, __nv_bfloat16 const*, float const*, "
     "__nv_bfloat16*, void*, long, float*, int*, float*, float*, float const*, float const*, "
     "float const*, float const*, float const*)",
     "splitk_reduce", false, true, 0, 0, 0, 0, 0, 1, 1, 1, 0, "", "", ""},
    {"void reduce_1Block_kernel<float, 128, 7, cublasGemvTensorStridedBatched<float>, "
     "cublasGemvTensorStridedBatched<__nv_bfloat16 const>, "
     "cublasGemvTensorStridedBatched<__nv_bfloat16> >(float const*, float, "
     "cublasGemvTensorStridedBatched<float>, int, float const*, float, "
     "cublasGemvTensorStridedBatched<__nv_bfloat16 const>, "
     "cublasGemvTensorStridedBatched<__nv_bfloat16>, cublasPointerMode_t, cublasLtEpilogue_t, "
     "cublasGemvTensorStridedBatched<biasType<cublasGemvTensorStridedBatched<__nv_bfloat16>::"
     "value_type, float>::type const>)",
     "gemv", false, true, 0, 0, 0, 0, 0, 1, 1, 1, 0, "", "", ""},
    {"void dot_kernel<float, 128, 0, cublasDotParams<cublasGemvTensorStridedBatched<__nv_bfloat16 "
     "const>, cublasGemvTensorStridedBatched<float> > >(cublasDotParams<"
     "cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<float> "
     ">)",
     "gemv", false, false, 0, 0, 0, 0, 0, 1, 1, 1, 0, "", "", ""},
    {"void gemmSN_NN_kernel<float, 256, 4, 2, 8, 3, 4, false, cublasGemvTensorStridedBatched<"
     "__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, "
     "cublasGemvTensorStridedBatched<__nv_bfloat16> >(cublasGemmSmallNParams<"
     "cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<"
     "__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float>)",
     "gemv", false, false, 0, 0, 0, 0, 0, 1, 1, 1, 0, "", "", ""},
    {"void gemmSN_NN_kernel<float, 128, 2, 4, 8, 4, 4, false, cublasGemvTensorStridedBatched<"
     "__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, "
     "cublasGemvTensorStridedBatched<__nv_bfloat16> >(cublasGemmSmallNParams<"
     "cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<"
     "__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float>)",
     "gemv", false, false, 0, 0, 0, 0, 0, 1, 1, 1, 0, "", "", ""},

    // CUTLASS 3 kernels as named by the CUTLASS library (profiler names).
    {"cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x256x64_1x2x1_0_tnn_align8_"
     "warpspecialized_cooperative_epi_tma",
     "cutlass3x", true, false, 90, 128, 256, 64, 0, 1, 2, 1, 8, "", "tnn",
     "warpspecialized_cooperative"},
    {"void cutlass::device_kernel<cutlass3x_sm90_tensorop_s64x128x16gemm_bf16_bf16_f32_void_bf16_"
     "128x128x64_2x1x1_0_tnn_align8_warpspecialized_pingpong_epi_tma>(cutlass3x_sm90_tensorop_"
     "s64x128x16gemm_bf16_bf16_f32_void_bf16_128x128x64_2x1x1_0_tnn_align8_warpspecialized_"
     "pingpong_epi_tma::Params)",
     "cutlass3x", true, false, 90, 128, 128, 64, 0, 2, 1, 1, 8, "64x128x16", "tnn",
     "warpspecialized_pingpong"},
    // NVIDIA/cutlass#947 (the name before its mainloop/epilogue suffixes), bare and wrapped the
    // way some tools print it: no return type, no parameters.
    {"cutlass3x_sm90_tensorop_h64x128x16gemm_f16_f16_f16_void_f16_128x128x64_1x1x1_0_nnn_align8",
     "cutlass3x", true, false, 90, 128, 128, 64, 0, 1, 1, 1, 8, "64x128x16", "nnn", ""},
    {"cutlass::device_kernel<cutlass3x_sm90_tensorop_h64x128x16gemm_f16_f16_f16_void_f16_"
     "128x128x64_1x1x1_0_nnn_align8>",
     "cutlass3x", true, false, 90, 128, 128, 64, 0, 1, 1, 1, 8, "64x128x16", "nnn", ""},
    // NVIDIA/cutlass#2186 (sm120, block-scaled).
    {"cutlass3x_sm120_bstensorop_s16x8x32gemm_ue8m0xe4m3_ue8m0xe4m3_f32_void_e5m2_128x128x128_"
     "1x1x1_0_tnt_align128_pingpong_q",
     "cutlass3x", true, false, 120, 128, 128, 128, 0, 1, 1, 1, 128, "16x8x32", "tnt", "pingpong"},
    // NVIDIA/cutlass#2923 (sm100: "0x0x1" is a cluster chosen at launch, kept as 0).
    {"cutlass3x_sm100_tensorop_gemm_e4m3_e4m3_f32_bf16_bf16_256x224x128_0x0x1_0_tnt_align16_2sm",
     "cutlass3x", true, false, 100, 256, 224, 128, 0, 0, 0, 1, 16, "", "tnt", "2sm"},
    {"cutlass3x_sm100_tensorop_gemm_e4m3_e4m3_f32_bf16_bf16_64x120x128_1x1x1_0_tnn_align8_"
     "cpasync_1sm_epi_nosmem",
     "cutlass3x", true, false, 100, 64, 120, 128, 0, 1, 1, 1, 8, "", "tnn", "cpasync_1sm"},
    // pytorch/pytorch#172263.
    {"cutlass3x_sm100_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x128x64_0x0x1_0_tnn_align8_1sm",
     "cutlass3x", true, false, 100, 128, 128, 64, 0, 0, 0, 1, 8, "", "tnn", "1sm"},

    // xmma kernels in cuBLAS/cuBLASLt.
    {"sm80_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x32_stage4_warpsize2x2x1_"
     "tensor16x8x16_kernel",
     "xmma", true, false, 80, 128, 128, 32, 4, 1, 1, 1, 0, "16x8x16", "nn", ""},
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_cgasize1x2x1_"
     "warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
     "xmma", true, false, 90, 128, 256, 64, 0, 1, 2, 1, 0, "", "tn", ""},
    // DefTruth/CUDA-Learn-Notes, hgemm README (a PyTorch fp16 matmul profiled on an RTX 3080).
    {"sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize96x64x32_stage3_warpsize2x2x1_tensor16x8x16_"
     "kernel",
     "xmma", true, false, 80, 96, 64, 32, 3, 1, 1, 1, 0, "16x8x16", "nn", ""},

    // Older cuBLAS names.
    {"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nn", "ampere", true, false, 80, 128,
     128, 64, 3, 1, 1, 1, 0, "16816", "nn", ""},
    {"ampere_sgemm_128x64_nn", "ampere", true, false, 80, 128, 64, 0, 0, 1, 1, 1, 0, "", "nn", ""},
    {"turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_nn", "turing", true, false, 75, 128, 128, 0, 0, 1,
     1, 1, 0, "1688", "nn", ""},
    {"volta_sgemm_128x64_nn", "volta", true, false, 70, 128, 64, 0, 0, 1, 1, 1, 0, "", "nn", ""},
    // karpathy/nanochat#105.
    {"ampere_bf16_s1688gemm_bf16_128x128_ldg8_f2f_stages_32x1_nn", "ampere", true, false, 80, 128,
     128, 32, 1, 1, 1, 1, 0, "1688", "nn", ""},
    {"ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_32x3_nn", "ampere", true, false, 80, 256,
     128, 32, 3, 1, 1, 1, 0, "16816", "nn", ""},
    // NVIDIA/cutlass#1025: a cuBLAS name with sliced/relu tokens, and a CUTLASS one with relu.
    {"ampere_fp16_s16816gemm_fp16_64x64_sliced1x2_ldg8_relu_f2f_stages_64x6_tn", "ampere", true,
     false, 80, 64, 64, 64, 6, 1, 1, 1, 0, "16816", "tn", ""},
    {"cutlass_80_tensorop_f16_s16816gemm_relu_f16_128x128_32x4_tn_align8", "cutlass2", true, false,
     80, 128, 128, 32, 4, 1, 1, 1, 8, "16816", "tn", ""},
    // Unwrapped CUTLASS 2 names, as cuBLAS and the CUTLASS profiler print them.
    {"cutlass_80_tensorop_s16816gemm_f16_64x64_32x10_tn_align8", "cutlass2", true, false, 80, 64,
     64, 32, 10, 1, 1, 1, 8, "16816", "tn", ""},
    {"cutlass_80_tensorop_bf16_s16816gemm_bf16_128x256_64x3_nn_align2", "cutlass2", true, false, 80,
     128, 256, 64, 3, 1, 1, 1, 2, "16816", "nn", ""},
    // wewe5215/AITemplate profiler sources: a CUTLASS library name without an architecture.
    {"cutlass_tensorop_f16_s16816gemm_f16_256x128_32x3_tn_align8", "cutlass2", true, false, 0, 256,
     128, 32, 3, 1, 1, 1, 8, "16816", "tn", ""},

    // Seen in public nsys/profiler tables found by code search (the index does not name the
    // repositories): nvjet without an architecture token (cuBLAS 12.x), an sm100 nvjet with
    // 2cta/bias tokens, a CUTLASS 3 simt kernel with a fused epilogue, and CUTLASS 2 kernels with a
    // relu variant or simt, wrapped with "T1::Params" arguments.
    {"nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NNT", "nvjet", true, false, 0, 256, 128, 64, 4, 1, 2, 1,
     0, "", "NNT", "coopA"},
    {"nvjet_sm100_qqtst_128x256_128x6_2x1_2cta_v_bz_bias_TNT", "nvjet", true, false, 100, 128, 256,
     128, 6, 2, 1, 1, 0, "", "TNT", ""},
    {"cutlass3x_sm100_simt_sgemm_f32_f32_f32_f32_f32_64x64x16_1x1x1_3_tnn_align1_bias_f32_relu",
     "cutlass3x", true, false, 100, 64, 64, 16, 3, 1, 1, 1, 1, "", "tnn", ""},
    {"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_256x64_32x4_nn_align8>"
     "(T1::Params)",
     "cutlass2", true, false, 80, 256, 64, 32, 4, 1, 1, 1, 8, "16816", "nn", ""},
    {"void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_tn_align1>(T1::Params)", "cutlass2",
     true, false, 80, 64, 64, 8, 5, 1, 1, 1, 1, "", "tn", ""},
};

TEST(KernelName, RealNames) {
  for (const Expected& row : kTable) {
    SCOPED_TRACE(row.name);
    const KernelTile tile = parse_kernel_name(row.name);
    EXPECT_EQ(tile.family, row.family);
    EXPECT_EQ(tile.known, row.known);
    EXPECT_EQ(tile.auxiliary, row.auxiliary);
    EXPECT_EQ(tile.sm, row.sm);
    EXPECT_EQ(tile.tile_m, row.tile_m);
    EXPECT_EQ(tile.tile_n, row.tile_n);
    EXPECT_EQ(tile.tile_k, row.tile_k);
    EXPECT_EQ(tile.stages, row.stages);
    EXPECT_EQ(tile.cluster_m, row.cluster_m);
    EXPECT_EQ(tile.cluster_n, row.cluster_n);
    EXPECT_EQ(tile.cluster_k, row.cluster_k);
    EXPECT_EQ(tile.align, row.align);
    EXPECT_EQ(tile.instruction, row.instruction);
    EXPECT_EQ(tile.layout, row.layout);
    EXPECT_EQ(tile.schedule, row.schedule);
  }
}

TEST(KernelName, WmmaFlagOnlyForWmmaKernels) {
  EXPECT_TRUE(parse_kernel_name("cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_nn_"
                                "align2")
                  .wmma);
  EXPECT_FALSE(
      parse_kernel_name("cutlass_80_tensorop_bf16_s16816gemm_bf16_64x64_32x6_nn_align2").wmma);
}

TEST(KernelName, SplitKMarker) {
  EXPECT_TRUE(parse_kernel_name("nvjet_sm90_tst_128x72_64x8_1x2_h_bz_splitK_TNT").split_k);
  EXPECT_FALSE(parse_kernel_name("nvjet_sm90_tst_256x128_64x4_1x4_h_bz_coopA_NNT").split_k);
}

TEST(KernelName, CoreIsTheInformativePart) {
  EXPECT_EQ(parse_kernel_name("void cutlass::Kernel2<cutlass_75_tensorop_s1688gemm_bf16_64x64_nn_"
                              "align1>(cutlass_75_tensorop_s1688gemm_bf16_64x64_nn_align1::Params)")
                .core,
            "cutlass_75_tensorop_s1688gemm_bf16_64x64_nn_align1");
  EXPECT_EQ(parse_kernel_name("nvjet_sm90_tst_64x8_64x16_1x1_h_bz_NNT").core,
            "nvjet_sm90_tst_64x8_64x16_1x1_h_bz_NNT");
  EXPECT_EQ(parse_kernel_name("void foo_kernel<float, 4>(float*, int)").core,
            "foo_kernel<float, 4>");
  EXPECT_EQ(parse_kernel_name("void at::native::(anonymous namespace)::bar<128>(int)").core,
            "at::native::(anonymous namespace)::bar<128>");
  EXPECT_EQ(parse_kernel_name("  nvjet_sm90_tst_64x8_64x16_1x1_h_bz_NNT\n").core,
            "nvjet_sm90_tst_64x8_64x16_1x1_h_bz_NNT");
}

TEST(KernelName, Describe) {
  EXPECT_EQ(describe(parse_kernel_name("nvjet_sm90_tst_256x128_64x4_1x4_h_bz_coopA_NNT")),
            "tile 256x128, K-block 64, 4 stages, cluster 1x4");
  EXPECT_EQ(describe(parse_kernel_name(
                "void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1>"
                "(cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1::Params)")),
            "tile 256x128, 1-element alignment (align1), mma.sync 16x8x8 (sm75)");
  EXPECT_EQ(describe(parse_kernel_name(
                "cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x256x64_1x2x1_0_tnn_"
                "align8_warpspecialized_cooperative_epi_tma")),
            "tile 128x256, K-block 64, cluster 1x2, 8-element alignment (align8)");
}

TEST(KernelName, DescribeOtherShapes) {
  EXPECT_EQ(describe(parse_kernel_name("cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_"
                                       "128x1_nn_align2")),
            "tile 32x32, K-block 128, 1 stage, 2-element alignment (align2), wmma 16x16x16 (sm80)");
  EXPECT_EQ(describe(parse_kernel_name("sm80_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_"
                                       "tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_"
                                       "kernel")),
            "tile 128x128, K-block 32, 4 stages, MMA 16x8x16 (sm80)");
  EXPECT_EQ(describe(parse_kernel_name("volta_h884gemm_64x64_ldg8_nn")),
            "tile 64x64, MMA 8x8x4 (sm70)");
  EXPECT_EQ(describe(parse_kernel_name("cutlass3x_sm100_tensorop_gemm_bf16_bf16_f32_bf16_bf16_"
                                       "128x128x64_0x0x1_0_tnn_align8_1sm")),
            "tile 128x128, K-block 64, cluster set at launch, 8-element alignment (align8)");
  EXPECT_EQ(describe(parse_kernel_name("nvjet_sm90_tst_128x72_64x8_1x2_h_bz_splitK_TNT")),
            "tile 128x72, K-block 64, 8 stages, cluster 1x2, split-K");
  EXPECT_EQ(describe(parse_kernel_name("ampere_sgemm_128x64_nn")), "tile 128x64");
}

TEST(KernelName, DescribeHelperKernels) {
  EXPECT_EQ(describe(parse_kernel_name("void cublasLt::splitKreduce_kernel<32, 16, int, float>"
                                       "(cublasLt::cublasSplitKParams<float>)")),
            "split-K reduction, auxiliary, no tile");
  EXPECT_EQ(describe(parse_kernel_name("void gemvNSP_kernel<float, 128, 16>(cublasGemvParams<"
                                       "cublasGemvTensorStridedBatched<float const> >)")),
            "cuBLAS gemv-style kernel, no tile in the name");
}

TEST(KernelName, CutlassSplitKReductionIsAuxiliary) {
  const KernelTile tile = parse_kernel_name(
      "void cutlass::Kernel<cutlass::reduction::kernel::ReduceSplitK<cutlass::MatrixShape<4, 128>,"
      " cutlass::epilogue::thread::LinearCombination<float, 4> > >(int)");
  EXPECT_EQ(tile.family, "splitk_reduce");
  EXPECT_TRUE(tile.auxiliary);
  EXPECT_FALSE(tile.known);
}

void expect_unknown(const std::string& name) {
  SCOPED_TRACE(name.substr(0, 200));
  const KernelTile tile = parse_kernel_name(name);
  EXPECT_FALSE(tile.known);
  EXPECT_EQ(describe(tile), "unknown");
  EXPECT_EQ(tile.sm, 0);
  EXPECT_EQ(tile.tile_m, 0);
  EXPECT_EQ(tile.tile_n, 0);
  EXPECT_EQ(tile.tile_k, 0);
  EXPECT_EQ(tile.stages, 0);
  EXPECT_EQ(tile.cluster_m, 1);
  EXPECT_EQ(tile.cluster_n, 1);
  EXPECT_EQ(tile.cluster_k, 1);
  EXPECT_EQ(tile.align, 0);
  EXPECT_TRUE(tile.instruction.empty());
  EXPECT_TRUE(tile.schedule.empty());
  EXPECT_TRUE(tile.layout.empty());
  EXPECT_FALSE(tile.wmma);
  EXPECT_FALSE(tile.split_k);
  EXPECT_FALSE(tile.auxiliary);
}

TEST(KernelName, GarbageIsUnknown) {
  expect_unknown("");
  expect_unknown("foo");
  expect_unknown("nvjet_sm90_tst_abcxdef");
  expect_unknown("cutlass_80_tensorop_bf16_s16816gemm_bf16_128x_nn");
  expect_unknown("   \n");
  expect_unknown("void");
  expect_unknown("_");
  expect_unknown("___x___");
  expect_unknown("nvjet");
  expect_unknown("nvjet_sm90_tst_128x8_TNT");  // tile without K-block and cluster: not the format
  expect_unknown("cutlass3x_sm90_tensorop_gemm_bf16");
  expect_unknown("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_warpgroupsize2x1x1_kernel");
  expect_unknown("ampere_sgemm_nn");
  expect_unknown("nvjet_sm90_tst_99999999999x128_64x4_1x4_h_bz_NNT");  // no int overflow
  expect_unknown("nvjet_sm90_tst_0x128_64x4_1x4_h_bz_NNT");            // no empty tile
  expect_unknown("nvjet_sm90_tst_128x128x64_64x4_1x4_h_bz_NNT");
  // Convolutions from the same families carry tiles too, but they are not GEMMs.
  expect_unknown(
      "sm80_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_"
      "tilesize128x128x32_stage4_warpsize2x2x1_g1_tensor16x8x16_kernel");
  expect_unknown("volta_scudnn_128x64_relu_interior_nn_v1");
  expect_unknown("cutlass_tensorop_s16816fprop_optimized_f16_128x128_32x5_nhwc_align8");
  // Generic names from other libraries are not cuBLAS helpers.
  expect_unknown(
      "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
      "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>"
      "::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, "
      "float, 4> >(at::native::ReduceOp<float, unsigned int, float, 4>)");
  expect_unknown("void dot_kernel<float>(float const*, float const*, float*)");
  expect_unknown("void at::native::(anonymous namespace)::elementwise_kernel<128, 4>(int)");
}

TEST(KernelName, GarbageKeepsTheFamilyItWasNamedFor) {
  EXPECT_EQ(parse_kernel_name("nvjet_sm90_tst_abcxdef").family, "nvjet");
  EXPECT_EQ(parse_kernel_name("cutlass_80_tensorop_bf16_s16816gemm_bf16_128x_nn").family,
            "cutlass2");
  EXPECT_EQ(parse_kernel_name("foo").family, "unknown");
  EXPECT_EQ(parse_kernel_name("").family, "unknown");
}

TEST(KernelName, NamesWithoutTemplateArguments) {
  expect_unknown("cutlass::Kernel2");
  expect_unknown("void cutlass::Kernel2<>()");
  expect_unknown("void cutlass::Kernel2<");
  expect_unknown("cutlass::device_kernel<");
  expect_unknown(
      "void cutlass::device_kernel<cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_"
      "bf16_128x>(Params)");
  expect_unknown("void kernel()");
  expect_unknown("()");
  expect_unknown(">>>(<<<");
  // The distinctive helper names are recognised even when a tool has dropped the arguments.
  EXPECT_EQ(parse_kernel_name("splitKreduce_kernel").family, "splitk_reduce");
  EXPECT_EQ(parse_kernel_name("gemmSN_TN_kernel").family, "gemv");
  // A procedural name followed by an (empty) parameter list still reads.
  EXPECT_TRUE(parse_kernel_name("nvjet_sm90_tst_64x8_64x16_1x1_h_bz_NNT()").known);
}

TEST(KernelName, TruncatedNamesReadOnlyWhatIsThere) {
  // Profilers cut long names; the wrapper's closing '>' is then missing.
  const KernelTile tile = parse_kernel_name(
      "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_128x256_"
      "64x3_nn_al");
  EXPECT_TRUE(tile.known);
  EXPECT_EQ(tile.tile_m, 128);
  EXPECT_EQ(tile.tile_n, 256);
  EXPECT_EQ(tile.stages, 3);
  EXPECT_EQ(tile.align, 0);
}

TEST(KernelName, VeryLongNames) {
  std::string long_tail = "nvjet_sm90_tst_256x128_64x4_1x4_h_bz";
  for (int i = 0; i < 200000; ++i) long_tail += "_x";
  long_tail += "_NNT";
  const KernelTile tile = parse_kernel_name(long_tail);
  EXPECT_TRUE(tile.known);
  EXPECT_EQ(tile.tile_m, 256);
  EXPECT_EQ(tile.layout, "NNT");

  expect_unknown(std::string(1 << 20, '<'));
  expect_unknown(std::string(1 << 20, '>'));
  expect_unknown(std::string(1 << 20, '('));
  expect_unknown(std::string(1 << 20, '_'));
  expect_unknown(std::string(1 << 20, '9'));
  expect_unknown("void cutlass::Kernel2<" + std::string(1 << 20, '<'));
  expect_unknown("void cutlass::Kernel2<" + std::string(1 << 20, 'a') + ">(int)");
  expect_unknown("void f<" + std::string(100000, '{') + ">(" + std::string(100000, ')'));
  expect_unknown("nvjet_sm90_tst_" + std::string(1 << 20, '1') + "x128_64x4_1x4_h_bz_NNT");
}

}  // namespace
}  // namespace shapescope
