// What the model needs to know about a GPU: per-SM resource limits (a property of the compute
// capability) and per-product figures (SM count, L2, vendor peak rates). Lets the model answer for
// GPUs the user does not have (`explain --gpu a100`), and fills in what a stored point does not
// record. Pure C++, no CUDA.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/problem.hpp"

namespace shapescope {

// Per-SM limits that decide how many CTAs fit on one SM (CUDA C++ Programming Guide, "Technical
// Specifications per Compute Capability").
struct SmLimits {
  int64_t smem_per_sm = 0;        // shared memory an SM can give its CTAs, bytes
  int64_t reserved_smem_per_cta = 0;  // the driver's per-CTA reservation (1 KiB from sm_80 on)
  int regs_per_sm = 0;            // 32-bit registers
  int max_threads_per_sm = 0;
  int max_ctas_per_sm = 0;
};
// nullopt for a compute capability the table does not know.
std::optional<SmLimits> sm_limits(int cc_major, int cc_minor);

struct GpuProfile {
  std::string key;       // what --gpu takes: "h100-sxm"
  std::string name;      // "NVIDIA H100 SXM5 80GB"
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  int64_t l2_bytes = 0;
  double bandwidth_gbs = 0;   // DRAM bandwidth, vendor datasheet
  double boost_clock_mhz = 0;
  // Dense tensor-core (fp32: CUDA-core) peak TFLOP/s from the vendor datasheet; 0 = not supported.
  double tflops_bf16 = 0, tflops_fp16 = 0, tflops_tf32 = 0, tflops_fp32 = 0, tflops_fp8 = 0;

  double vendor_tflops(DType dtype) const;
};

// A100, A10, L4, H100 SXM, H100 PCIe, H200, B200.
const std::vector<GpuProfile>& gpu_profiles();
// "h100", "H100-SXM", "a100": by key or alias, case-insensitive; nullptr when unknown.
const GpuProfile* find_profile(std::string_view key);
// The profile whose product the name a device reports ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB")
// belongs to; nullptr when none does.
const GpuProfile* profile_for_device_name(std::string_view gpu_name);
// "a100, a10, l4, h100-sxm, h100-pcie, h200, b200" for error messages and --help.
std::string profile_keys();

}  // namespace shapescope
