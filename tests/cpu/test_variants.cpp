// --backend's selection of our kernels (backends/variants.hpp): read once into typed parts, and the
// variants picked from those parts, nothing written out and read again.
#include "backends/variants.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "kernels/registry.hpp"

namespace shapescope {
namespace {

std::set<std::string> keys(const std::vector<const kernels::Variant*>& variants) {
  std::set<std::string> out;
  for (const kernels::Variant* v : variants) out.insert(v->key());
  return out;
}

TEST(Variants, ParsedIntoTypedParts) {
  EXPECT_EQ(parse_backend_spec("cublas"), BackendSpec(BackendKind::kCublas));
  EXPECT_EQ(parse_backend_spec("custom"), BackendSpec(BackendKind::kCustom));
  EXPECT_EQ(parse_backend_spec("custom:05_wgmma_tma").variants, (VariantSelection{"05_wgmma_tma", std::nullopt, ""}));
  EXPECT_EQ(parse_backend_spec("custom:05_wgmma_tma:128x256").variants,
            (VariantSelection{"05_wgmma_tma", std::make_pair(128, 256), ""}));
  // One variant selected is its whole key, the algo its points are stored under.
  const BackendSpec one = parse_backend_spec("custom:05_wgmma_tma:128x256:dp");
  EXPECT_EQ(one.variants, (VariantSelection{"05_wgmma_tma", std::make_pair(128, 256), "dp"}));
  EXPECT_EQ(one.algo(), "05_wgmma_tma:128x256:dp");
  EXPECT_EQ(one.text(), "custom:05_wgmma_tma:128x256:dp");
  EXPECT_EQ(parse_backend_spec("custom:01_naive").variants.text(), "01_naive:16x16:dp");
}

// A selection made in code, never written as text, picks its variants from its parts.
TEST(Variants, SelectedFromTheParts) {
  const BackendSpec tile(BackendKind::kCustom, VariantSelection{"05_wgmma_tma", std::make_pair(128, 256), ""});
  EXPECT_EQ(keys(select_variants(tile)),
            (std::set<std::string>{"05_wgmma_tma:128x256:dp", "05_wgmma_tma:128x256:persistent",
                                      "05_wgmma_tma:128x256:streamk", "05_wgmma_tma:128x256:grouped"}));
  const BackendSpec kernel(BackendKind::kCustom, VariantSelection{"04_mma_pipelined", std::nullopt, ""});
  for (const kernels::Variant* v : select_variants(kernel)) EXPECT_EQ(v->kernel, "04_mma_pipelined");
  EXPECT_EQ(select_variants(BackendSpec(BackendKind::kCustom)).size(), kernels::registry().size());
  // The same selection as --backend names it.
  EXPECT_EQ(keys(select_variants(tile)), keys(select_variants(parse_backend_spec("custom:05_wgmma_tma:128x256"))));
  // A selection of nothing this registry has is refused, naming it.
  const BackendSpec none(BackendKind::kCustom, VariantSelection{"05_wgmma_tma", std::make_pair(1, 1), ""});
  try {
    select_variants(none);
    ADD_FAILURE() << "selected a 1x1 tile";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "--backend: 'custom:05_wgmma_tma:1x1' selects none of our kernels' variants");
  }
}

TEST(Variants, StoredKeyIsLookedUp) {
  const std::optional<BackendSpec> spec = stored_variant_spec("04_mma_pipelined:128x256:dp");
  ASSERT_TRUE(spec);
  EXPECT_EQ(*spec, parse_backend_spec("custom:04_mma_pipelined:128x256:dp"));
  EXPECT_EQ(select_variants(*spec).size(), 1u);
  EXPECT_FALSE(stored_variant_spec("04_mma_pipelined:128x256"));
  EXPECT_FALSE(stored_variant_spec("99_gone:128x256:dp"));
}

// The order views measure backends in: by name, as text() would sort.
TEST(Variants, OrderedByName) {
  const std::vector<BackendSpec> specs = {
      BackendSpec(BackendKind::kCublas), BackendSpec(BackendKind::kCublasGrouped), BackendSpec(BackendKind::kCublasLt),
      BackendSpec(BackendKind::kCustom), parse_backend_spec("custom:05_wgmma_tma:128x256:grouped")};
  for (size_t i = 0; i + 1 < specs.size(); ++i) {
    EXPECT_TRUE(specs[i] < specs[i + 1]) << specs[i].text();
    EXPECT_LT(specs[i].text(), specs[i + 1].text());
  }
}

}  // namespace
}  // namespace shapescope
