// What a GPU kernel's (demangled) name says about the GEMM it runs. Pure C++, no CUDA.
// Tiles are in the kernel's own frame: for cuBLAS/cuBLASLt kernels that is the column-major frame
// (the library's m is the user's N); the caller maps it.
//
// Only what the name states is read: a field the name does not spell out stays at its default,
// and a name whose structure is not the expected one gives known=false rather than a guess.
#pragma once
#include <string>
#include <string_view>

namespace shapescope {

struct KernelTile {
  // The name was recognised and a tile read from it; false: every field below (except family,
  // auxiliary and core) is 0/empty.
  bool known = false;
  // "nvjet", "cutlass2" (cutlass_75_/cutlass_80_ Kernel2 names and other CUTLASS 2 procedural
  // names), "cutlass3x", "xmma", "ampere"/"turing"/"volta" (older cuBLAS names),
  // "splitk_reduce", "gemv", "unknown".
  std::string family;
  int sm = 0;                  // the architecture in the name (75, 80, 90, 100, ...); 0: unsaid
  int tile_m = 0, tile_n = 0;  // CTA tile
  int tile_k = 0;              // K-block; 0 when the name does not say
  int stages = 0;  // pipeline stages; 0 when the name does not say ("auto" in cutlass3x is 0)
  // Thread-block cluster from the name; 1x1x1 when not stated. A 0 is kept as the name spells it:
  // CUTLASS sm100 names write "0x0x1" for a cluster chosen at launch.
  int cluster_m = 1, cluster_n = 1, cluster_k = 1;
  int align = 0;            // operand alignment in elements ("align8"); 0 when not stated
  std::string instruction;  // MMA shape as in the name: "1688", "16816", "161616" (wmma),
                            // "16x8x16" (xmma), "64x128x16" (cutlass3x); empty if absent
  bool wmma = false;        // cutlass_80_wmma_* kernels
  // "warpspecialized_cooperative", "warpspecialized_pingpong", "coopA", "coopB", ... as the name
  // spells it; empty if absent. Epilogue tokens ("epi_tma", "bias_relu") are not part of it.
  std::string schedule;
  // The operand-layout token as spelled ("nn", "tnn", "NNT"); empty if absent. For xmma names
  // it is the two-letter token before the single-letter one ("tn" of "tn_n").
  std::string layout;
  // Added field: the name marks a split-K main loop (nvjet "splitK"). Split-K launches more CTAs
  // than the output tiles alone would need, so the caller should not count CTAs from the tile.
  bool split_k = false;
  bool auxiliary = false;  // a helper kernel that is not a GEMM main loop (split-K reduction, ...)
  // The name stripped to its informative part: the inner CUTLASS Kernel2/device_kernel argument,
  // the procedural name itself, or for other kernels the name without return type and parameters.
  std::string core;
};

// Never throws; any input (empty, truncated, megabytes long) gives a KernelTile.
KernelTile parse_kernel_name(std::string_view demangled);

// One line a person can read: "tile 256x128, K-block 64, 4 stages, cluster 1x4" /
// "tile 256x128, 1-element alignment (align1), mma.sync 16x8x8 (sm75)" / "unknown".
// Helper kernels that were recognised but carry no tile get a short line saying what they are
// ("split-K reduction, auxiliary, no tile"); anything else not known is "unknown".
std::string describe(const KernelTile& tile);

// "cutlass_80_tensorop_..._align2" for "void cutlass::Kernel2<cutlass_80_..._align2>(...::Params)".
std::string short_kernel_name(const std::string& name);

}  // namespace shapescope
