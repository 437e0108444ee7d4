#include "model/device_profile.hpp"

#include <algorithm>
#include <cctype>

namespace shapescope {

namespace {

constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * kKiB;

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Whether `word` occurs in `text` as a whole token (not followed or preceded by a letter or
// digit), so that "a10" does not match "a100".
bool has_token(const std::string& text, std::string_view word) {
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const bool left = at == 0 || !std::isalnum(static_cast<unsigned char>(text[at - 1]));
    const size_t end = at + word.size();
    const bool right = end == text.size() || !std::isalnum(static_cast<unsigned char>(text[end]));
    if (left && right) return true;
  }
  return false;
}

}  // namespace

std::optional<SmLimits> sm_limits(int cc_major, int cc_minor) {
  const int cc = cc_major * 10 + cc_minor;
  switch (cc) {
    case 70: return SmLimits{96 * kKiB, 0, 65536, 2048, 32};
    case 75: return SmLimits{64 * kKiB, 0, 65536, 1024, 16};
    case 80: return SmLimits{164 * kKiB, 1 * kKiB, 65536, 2048, 32};
    case 86: return SmLimits{100 * kKiB, 1 * kKiB, 65536, 1536, 16};
    case 87: return SmLimits{164 * kKiB, 1 * kKiB, 65536, 1536, 16};
    case 89: return SmLimits{100 * kKiB, 1 * kKiB, 65536, 1536, 24};
    case 90: return SmLimits{228 * kKiB, 1 * kKiB, 65536, 2048, 32};
    case 100: return SmLimits{228 * kKiB, 1 * kKiB, 65536, 2048, 32};
    case 120: return SmLimits{100 * kKiB, 1 * kKiB, 65536, 1536, 32};
    default: return std::nullopt;
  }
}

double GpuProfile::vendor_tflops(DType dtype) const {
  switch (dtype) {
    case DType::kBf16: return tflops_bf16;
    case DType::kFp16: return tflops_fp16;
    case DType::kTf32: return tflops_tf32;
    case DType::kFp32: return tflops_fp32;
    case DType::kFp8: return tflops_fp8;
  }
  return 0;
}

// Vendor datasheet figures, dense (no 2:4 sparsity). L2 sizes are what cudaDeviceProp reports
// (the H200 reports 60 MiB, measured on one).
const std::vector<GpuProfile>& gpu_profiles() {
  static const std::vector<GpuProfile> profiles = {
      {"a100", "NVIDIA A100 SXM4 80GB", 108, 8, 0, 40 * kMiB, 2039, 1410, 312, 312, 156, 19.5, 0},
      {"a10", "NVIDIA A10", 72, 8, 6, 6 * kMiB, 600, 1695, 125, 125, 62.5, 31.2, 0},
      {"l4", "NVIDIA L4", 58, 8, 9, 48 * kMiB, 300, 2040, 121, 121, 60, 30.3, 242},
      {"h100-sxm", "NVIDIA H100 SXM5 80GB", 132, 9, 0, 50 * kMiB, 3350, 1980, 989, 989, 495, 67, 1979},
      {"h100-pcie", "NVIDIA H100 PCIe 80GB", 114, 9, 0, 50 * kMiB, 2000, 1755, 756, 756, 378, 51, 1513},
      {"h200", "NVIDIA H200 SXM 141GB", 132, 9, 0, 60 * kMiB, 4800, 1980, 989, 989, 495, 67, 1979},
      {"b200", "NVIDIA B200 (HGX)", 148, 10, 0, 126 * kMiB, 8000, 1965, 2250, 2250, 1100, 75, 4500},
  };
  return profiles;
}

const GpuProfile* find_profile(std::string_view key) {
  std::string wanted = lower(key);
  if (wanted == "h100" || wanted == "h100-sxm5" || wanted == "h100sxm") wanted = "h100-sxm";
  if (wanted == "h200-sxm") wanted = "h200";
  for (const GpuProfile& profile : gpu_profiles()) {
    if (profile.key == wanted) return &profile;
  }
  return nullptr;
}

const GpuProfile* profile_for_device_name(std::string_view gpu_name) {
  const std::string name = lower(gpu_name);
  if (has_token(name, "h100")) {
    return find_profile(name.find("pcie") != std::string::npos ? "h100-pcie" : "h100-sxm");
  }
  for (const char* key : {"a100", "a10", "l4", "h200", "b200"}) {
    if (has_token(name, key)) return find_profile(key);
  }
  return nullptr;
}

std::string profile_keys() {
  std::string keys;
  for (const GpuProfile& profile : gpu_profiles()) {
    if (!keys.empty()) keys += ", ";
    keys += profile.key;
  }
  return keys;
}

}  // namespace shapescope
