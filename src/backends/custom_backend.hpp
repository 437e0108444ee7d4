// Our own kernels (kernels/) as a backend: `--backend custom` runs every registered variant that
// supports the problem, `custom:<kernel>[:<BMxBN>][:<schedule>]` a selection. A point's algo is the
// variant's key ("03_register_blocked:128x128:dp"), so the tile and schedule are exact.
// Every call is checked against cuBLAS before it is timed (Backend::needs_verification). A grouped call
// (Problem::groups) runs on the grouped schedule's variants ("custom:05_wgmma_tma:128x256:grouped"),
// bound to the whole shared buffers; every other variant runs single GEMMs only.
#pragma once
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/variants.hpp"
#include "kernels/registry.hpp"

namespace shapescope {

class CustomBackend : public Backend {
 public:
  CustomBackend(const BackendSpec& spec, const DeviceBuffers& buffers);
  BackendKind kind() const override { return BackendKind::kCustom; }
  std::vector<std::string> algo_keys() const override;
  std::vector<std::string> algo_keys_for(const Problem& problem) const override;
  std::optional<std::string> unsupported(const Problem& problem, const DeviceContext& device) const override;
  std::vector<PreparedCall> prepare(const Problem& problem, const std::vector<std::string>& wanted,
                                    std::string& why_missing) override;
  bool needs_verification() const override { return true; }

 private:
  // Why the variant cannot run the problem on this device with this build, or "".
  std::string unsupported_here(const kernels::Variant& v, const Problem& problem) const;
  // The selected variants for the problem's kind of call: the grouped schedule's for a grouped call,
  // the others for a single GEMM (empty when the selection has none of that kind).
  std::vector<const kernels::Variant*> variants_for(const Problem& problem) const;
  std::vector<const kernels::Variant*> variants_;
  const DeviceBuffers& buffers_;
  int cc_ = 0;  // the device's compute capability (major * 10 + minor), known at unsupported()
};

}  // namespace shapescope
