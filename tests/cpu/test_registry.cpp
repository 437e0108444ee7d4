// The kernel registry (kernels/registry.hpp) without a GPU: keys, look-up, and the reasons a
// variant gives for problems it cannot run.
#include "kernels/registry.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

#include <array>
#include <set>
#include <stdexcept>
#include <sstream>

namespace shapescope::kernels {
namespace {

Problem bf16_problem(int64_t m, int64_t n, int64_t k, Layout layout = Layout::kNN) {
  Problem p;
  p.m = m; p.n = n; p.k = k;
  p.dtype = DType::kBf16;
  p.layout = layout;
  p.lda = p.a_cols();
  p.ldb = p.b_cols();
  p.ldc = p.n;
  return p;
}

const Variant& naive() {
  const Variant* v = find_variant("01_naive:16x16:dp");
  if (v == nullptr) throw std::runtime_error("01_naive:16x16:dp is not registered");
  return *v;
}

TEST(Registry, ListsTheLadder) {
  std::set<std::string> keys;
  for (const Variant& v : registry()) keys.insert(v.key());
  EXPECT_EQ(keys, (std::set<std::string>{"01_naive:16x16:dp", "02_smem_tiled:32x32:dp",
                                         "03_register_blocked:128x128:dp",
                                         "03_register_blocked:64x64:dp"}));
}

TEST(Registry, KeysAreUniqueAndParseBackToTheFields) {
  std::set<std::string> seen;
  for (const Variant& v : registry()) {
    const std::string key = v.key();
    EXPECT_TRUE(seen.insert(key).second) << "duplicate key " << key;
    // kernel:BMxBN:schedule
    std::istringstream in(key);
    std::string kernel, tile, schedule;
    ASSERT_TRUE(std::getline(in, kernel, ':') && std::getline(in, tile, ':') &&
                std::getline(in, schedule))
        << key;
    EXPECT_EQ(kernel, v.kernel);
    const auto x = tile.find('x');
    ASSERT_NE(x, std::string::npos) << key;
    EXPECT_EQ(std::stoi(tile.substr(0, x)), v.bm) << key;
    EXPECT_EQ(std::stoi(tile.substr(x + 1)), v.bn) << key;
    EXPECT_EQ(schedule, schedule_name(v.schedule)) << key;
    EXPECT_EQ(find_variant(key), &v) << key;
  }
}

TEST(Registry, VariantsDescribeThemselves) {
  for (const Variant& v : registry()) {
    EXPECT_GT(v.bm, 0) << v.key();
    EXPECT_GT(v.bn, 0) << v.key();
    EXPECT_GT(v.bk, 0) << v.key();
    EXPECT_GT(v.threads, 0) << v.key();
    EXPECT_LE(v.threads, 1024) << v.key();
    EXPECT_GE(v.min_sm, 80) << v.key() << ": the build ships nothing older than sm_80";
    EXPECT_GE(v.smem_bytes, 0) << v.key();
    EXPECT_LE(v.smem_bytes, 48 * 1024) << v.key() << ": static shared memory is capped at 48 KiB";
    EXPECT_EQ(v.schedule, Schedule::kDataParallel) << v.key();
  }
  const Variant* big = find_variant("03_register_blocked:128x128:dp");
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big->bk, 16);
  EXPECT_EQ(big->threads, 256);
  EXPECT_EQ(big->smem_bytes, 16 * (128 + 4) * 2 * 4);
}

TEST(Registry, ScheduleNames) {
  EXPECT_EQ(schedule_name(Schedule::kDataParallel), "dp");
  EXPECT_EQ(schedule_name(Schedule::kPersistent), "persistent");
  EXPECT_EQ(schedule_name(Schedule::kStreamK), "streamk");
}

TEST(Registry, FindVariantRejectsUnknownKeys) {
  EXPECT_EQ(find_variant(""), nullptr);
  EXPECT_EQ(find_variant("01_naive"), nullptr);
  EXPECT_EQ(find_variant("01_naive:32x32:dp"), nullptr);
  EXPECT_EQ(find_variant("03_register_blocked:128x128:streamk"), nullptr);
  EXPECT_NE(find_variant("02_smem_tiled:32x32:dp"), nullptr);
}

TEST(Registry, RunsBf16NnAndNtOnAnyShape) {
  const std::array<int64_t, 3> kShapes[] = {
      {1, 1, 1}, {127, 129, 65}, {129, 127, 1}, {4096, 4096, 4096}};
  for (const Variant& v : registry())
    for (Layout layout : {Layout::kNN, Layout::kNT})
      for (const std::array<int64_t, 3>& mnk : kShapes) {
        Problem p = bf16_problem(mnk[0], mnk[1], mnk[2], layout);
        EXPECT_EQ(unsupported(v, p, 90), "") << v.key() << " " << p.shape_string();
        p.lda += 3; p.ldb += 1; p.ldc += 7; p.off_a = 1; p.off_b = 3; p.off_c = 5; p.batch = 4;
        EXPECT_EQ(unsupported(v, p, 80), "") << v.key() << " padded, offset, batched";
      }
}

TEST(Registry, Bf16Only) {
  for (DType dtype : {DType::kFp16, DType::kFp32, DType::kTf32, DType::kFp8}) {
    Problem p = bf16_problem(64, 64, 64);
    p.dtype = dtype;
    EXPECT_EQ(unsupported(naive(), p, 90), "01_naive runs bf16 only");
  }
  Problem p = bf16_problem(64, 64, 64);
  p.dtype = DType::kFp16;
  EXPECT_EQ(unsupported(*find_variant("03_register_blocked:64x64:dp"), p, 90),
            "03_register_blocked runs bf16 only");
}

TEST(Registry, LayoutsNnAndNtOnly) {
  for (Layout layout : {Layout::kTN, Layout::kTT}) {
    const std::string why = unsupported(naive(), bf16_problem(64, 64, 64, layout), 90);
    EXPECT_NE(why.find("01_naive"), std::string::npos) << why;
    EXPECT_NE(why.find("nn and nt"), std::string::npos) << why;
  }
}

TEST(Registry, ComputeCapabilityTooLow) {
  const Problem p = bf16_problem(64, 64, 64);
  const std::string why = unsupported(naive(), p, 75);
  EXPECT_EQ(why, "01_naive needs compute capability 8.0 or newer; this GPU is 7.5");
  EXPECT_EQ(unsupported(naive(), p, 80), "");
  EXPECT_EQ(unsupported(naive(), p, 120), "");
}

TEST(Registry, ShapeLimits) {
  const Variant& v = naive();
  EXPECT_EQ(unsupported(v, bf16_problem(0, 8, 8), 90), "01_naive needs M, N, K >= 1");
  EXPECT_EQ(unsupported(v, bf16_problem(8, 8, 0), 90), "01_naive needs M, N, K >= 1");
  EXPECT_NE(unsupported(v, bf16_problem(8, int64_t(1) << 31, 8), 90).find("2^31"),
            std::string::npos);
  // Grid y holds at most 65535 CTA rows.
  EXPECT_EQ(unsupported(v, bf16_problem(65535 * 16, 1, 1), 90), "");
  EXPECT_NE(unsupported(v, bf16_problem(65535 * 16 + 1, 1, 1), 90).find("M up to 1048560"),
            std::string::npos);
  Problem batched = bf16_problem(8, 8, 8);
  batched.batch = 65536;
  EXPECT_NE(unsupported(v, batched, 90).find("batch"), std::string::npos);
  batched.batch = 0;
  EXPECT_NE(unsupported(v, batched, 90).find("batch"), std::string::npos);
  Problem narrow = bf16_problem(8, 8, 8, Layout::kNT);
  narrow.ldb = 7;  // B^T is N x K: rows of 8
  EXPECT_NE(unsupported(v, narrow, 90).find("ldb >= 8"), std::string::npos);
}

TEST(Registry, UnregisteredVariant) {
  Variant v = naive();
  v.bm = v.bn = 8;
  EXPECT_EQ(unsupported(v, bf16_problem(8, 8, 8), 90),
            "no registered kernel variant 01_naive:8x8:dp");
}

// launch() checks before it touches the GPU, so this needs none: a problem the variant cannot
// run is the caller's bug, an internal error.
TEST(Registry, LaunchRefusesWhatTheVariantCannotRun) {
  const Problem p = bf16_problem(8, 8, 8, Layout::kTN);
  try {
    launch(naive(), p, nullptr, nullptr, nullptr, nullptr);
    FAIL() << "launch accepted layout tn";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInternal);
    EXPECT_NE(std::string(e.what()).find("nn and nt"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace shapescope::kernels
