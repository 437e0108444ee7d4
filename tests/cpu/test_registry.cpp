// The kernel registry (kernels/registry.hpp) without a GPU: keys, look-up, and the reasons a
// variant gives for problems it cannot run.
#include "kernels/registry.hpp"

#include "kernels/group_table.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.hpp"

#include <array>
#include <set>
#include <stdexcept>
#include <sstream>
#include <utility>
#include <vector>

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

const Variant& variant(const std::string& key) {
  const Variant* v = find_variant(key);
  if (v == nullptr) throw std::runtime_error(key + " is not registered");
  return *v;
}

const Variant& naive() { return variant("01_naive:16x16:dp"); }

constexpr const char* kMma = "04_mma_pipelined";
constexpr const char* kWgmma = "05_wgmma_tma";
const char kMmaAlignment[] =
    "04_mma_pipelined needs lda, ldb and offsets that are multiples of 8 elements (rows of 16-byte "
    "chunks)";

// The tensor-core kernels: 04 and 05 copy 16-byte chunks and have schedules.
bool tensor_core(const Variant& v) { return v.kernel == kMma || v.kernel == kWgmma; }

// 04 and 05 copy 16-byte chunks: round lda and ldb up to multiples of 8 elements for them.
void align_rows_for(const Variant& v, Problem& p) {
  if (!tensor_core(v)) return;
  p.lda = (p.lda + 7) / 8 * 8;
  p.ldb = (p.ldb + 7) / 8 * 8;
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

TEST(Registry, ListsTheLadder) {
  std::set<std::string> keys;
  for (const Variant& v : registry()) keys.insert(v.key());
  EXPECT_EQ(keys, (std::set<std::string>{"01_naive:16x16:dp", "02_smem_tiled:32x32:dp",
                                         "03_register_blocked:128x128:dp",
                                         "03_register_blocked:64x64:dp",
                                         "04_mma_pipelined:64x64:dp",
                                         "04_mma_pipelined:128x128:dp",
                                         "04_mma_pipelined:128x256:dp",
                                         "04_mma_pipelined:256x128:dp",
                                         "04_mma_pipelined:64x64:persistent",
                                         "04_mma_pipelined:128x128:persistent",
                                         "04_mma_pipelined:128x256:persistent",
                                         "04_mma_pipelined:256x128:persistent",
                                         "04_mma_pipelined:64x64:streamk",
                                         "04_mma_pipelined:128x128:streamk",
                                         "04_mma_pipelined:128x256:streamk",
                                         "04_mma_pipelined:256x128:streamk",
                                         "05_wgmma_tma:128x128:dp",
                                         "05_wgmma_tma:128x256:dp",
                                         "05_wgmma_tma:128x128:persistent",
                                         "05_wgmma_tma:128x256:persistent",
                                         "05_wgmma_tma:128x128:streamk",
                                         "05_wgmma_tma:128x256:streamk",
                                         "05_wgmma_tma:128x128:grouped",
                                         "05_wgmma_tma:128x256:grouped"}));
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
    EXPECT_GE(v.dynamic_smem_bytes, 0) << v.key();
    EXPECT_LE(v.smem_bytes + v.dynamic_smem_bytes, 227 * 1024)
        << v.key() << ": a CTA gets at most 227 KiB of shared memory (H100/H200)";
    EXPECT_TRUE(v.schedule == Schedule::kDataParallel || v.schedule == Schedule::kPersistent ||
                v.schedule == Schedule::kStreamK ||
                (v.schedule == Schedule::kGrouped && v.kernel == kWgmma))
        << v.key();
    if (!tensor_core(v)) {
      EXPECT_EQ(v.schedule, Schedule::kDataParallel) << v.key();
    }
  }
  const Variant& big = variant("03_register_blocked:128x128:dp");
  EXPECT_EQ(big.bk, 16);
  EXPECT_EQ(big.threads, 256);
  EXPECT_EQ(big.smem_bytes, 16 * (128 + 4) * 2 * 4);
  EXPECT_EQ(big.dynamic_smem_bytes, 0);
  // 04: 64x64 has 4 stages of 64 x 32 + 32 x 64 bf16, the others 3 stages of BM x 64 + 64 x BN,
  // all dynamic; 4 warps of 32 x 32 or 8 of 64 x 32/64. Every tile runs every schedule.
  for (const char* schedule : {"dp", "persistent", "streamk"}) {
    const std::string tail = std::string(":") + schedule;
    const Variant& small = variant(kMma + std::string(":64x64") + tail);
    EXPECT_EQ(small.bk, 32);
    EXPECT_EQ(small.threads, 128);
    EXPECT_EQ(small.smem_bytes, 0);
    EXPECT_EQ(small.dynamic_smem_bytes, 4 * (64 * 32 + 32 * 64) * 2);
    const Variant& square = variant(kMma + std::string(":128x128") + tail);
    EXPECT_EQ(square.threads, 256);
    EXPECT_EQ(square.bk, 64);
    EXPECT_EQ(square.dynamic_smem_bytes, 3 * (128 * 64 + 64 * 128) * 2);
    const Variant& wide = variant(kMma + std::string(":128x256") + tail);
    EXPECT_EQ(wide.threads, 256);
    EXPECT_EQ(wide.dynamic_smem_bytes, 3 * (128 * 64 + 64 * 256) * 2);
    EXPECT_EQ(wide.min_sm, 80);
    // 256 x 128: 8 warps of 64 x 64 (4 x 2), 144 KiB like 128 x 256.
    const Variant& tall = variant(kMma + std::string(":256x128") + tail);
    EXPECT_EQ(tall.bk, 64);
    EXPECT_EQ(tall.threads, 256);
    EXPECT_EQ(tall.smem_bytes, 0);
    EXPECT_EQ(tall.dynamic_smem_bytes, 3 * (256 * 64 + 64 * 128) * 2);
    EXPECT_EQ(tall.dynamic_smem_bytes, 144 * 1024);
    EXPECT_EQ(tall.min_sm, 80);
  }
  EXPECT_EQ(variant("04_mma_pipelined:128x128:streamk").schedule, Schedule::kStreamK);
}

TEST(Registry, ScheduleNames) {
  EXPECT_EQ(schedule_name(Schedule::kDataParallel), "dp");
  EXPECT_EQ(schedule_name(Schedule::kPersistent), "persistent");
  EXPECT_EQ(schedule_name(Schedule::kStreamK), "streamk");
  EXPECT_EQ(schedule_name(Schedule::kGrouped), "grouped");
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
        align_rows_for(v, p);
        if (v.schedule == Schedule::kGrouped) {  // (Registry.GroupedRunsGroupedCallsOnly)
          EXPECT_EQ(unsupported(v, p, 90), "05_wgmma_tma (grouped) runs grouped calls only");
          continue;
        }
        EXPECT_EQ(unsupported(v, p, 90), "") << v.key() << " " << p.shape_string();
        if (tensor_core(v)) {  // aligned rows and offsets of A and B; C as it comes
          p.lda += 8; p.ldb += 16; p.ldc += 7; p.off_a = 8; p.off_b = 24; p.off_c = 5;
        } else {
          p.lda += 3; p.ldb += 1; p.ldc += 7; p.off_a = 1; p.off_b = 3; p.off_c = 5;
        }
        p.batch = 4;
        EXPECT_EQ(unsupported(v, p, v.min_sm), "") << v.key() << " padded, offset, batched";
      }
}

// cp.async moves 16-byte chunks: rows of A and B, and their first elements, must be 16-byte
// aligned. C is stored element by element where it is not 4-byte aligned: any ldc and offset.
TEST(Registry, MmaPipelinedNeedsRowsOf16Bytes) {
  for (const Variant& v : registry()) {
    if (v.kernel != kMma) continue;
    for (Layout layout : {Layout::kNN, Layout::kNT}) {
      const Problem ok = bf16_problem(64, 64, 64, layout);
      ASSERT_EQ(unsupported(v, ok, 90), "") << v.key();
      Problem p = ok;
      p.lda = 68;
      EXPECT_TRUE(starts_with(unsupported(v, p, 90), kMmaAlignment)) << unsupported(v, p, 90);
      p = ok;
      p.ldb = 65;
      EXPECT_TRUE(starts_with(unsupported(v, p, 90), kMmaAlignment)) << unsupported(v, p, 90);
      p = ok;
      p.off_a = 4;
      EXPECT_TRUE(starts_with(unsupported(v, p, 90), kMmaAlignment)) << unsupported(v, p, 90);
      p = ok;
      p.off_b = 1;
      EXPECT_TRUE(starts_with(unsupported(v, p, 90), kMmaAlignment)) << unsupported(v, p, 90);
      p = ok;
      p.ldc = 67;
      p.off_c = 3;
      EXPECT_EQ(unsupported(v, p, 90), "") << v.key() << ": any ldc and C offset";
      // nn with K = 1: A's rows are one element, so lda must be padded to 8; nt's B likewise.
      Problem thin = bf16_problem(5, 3, 1, layout);
      EXPECT_TRUE(starts_with(unsupported(v, thin, 90), kMmaAlignment)) << v.key();
      thin.lda = thin.ldb = 8;
      EXPECT_EQ(unsupported(v, thin, 90), "") << v.key() << ": K = 1, M and N odd";
    }
  }
}

TEST(Registry, MmaPipelinedNeedsAmpere) {
  const Problem p = bf16_problem(64, 64, 64);
  for (const Variant& v : registry()) {
    if (v.kernel != kMma) continue;
    EXPECT_EQ(unsupported(v, p, 75),
              "04_mma_pipelined needs compute capability 8.0 or newer; this GPU is 7.5");
    EXPECT_EQ(unsupported(v, p, 80), "");
    EXPECT_EQ(unsupported(v, p, 90), "");
  }
}

// dp puts M-tiles on grid y and the batch on grid z (65535 each); persistent walks one 1D list
// of tiles x batch, numbered with int.
TEST(Registry, MmaPipelinedGridLimits) {
  const Variant& dp = variant("04_mma_pipelined:128x128:dp");
  const Variant& persistent = variant("04_mma_pipelined:128x128:persistent");
  EXPECT_EQ(unsupported(dp, bf16_problem(65535 * 128, 8, 8), 90), "");
  EXPECT_NE(unsupported(dp, bf16_problem(65535 * 128 + 1, 8, 8), 90).find("M up to 8388480"),
            std::string::npos);
  EXPECT_EQ(unsupported(persistent, bf16_problem(65535 * 128 + 1, 8, 8), 90), "");
  Problem batched = bf16_problem(8, 8, 8);
  batched.batch = 100000;
  EXPECT_NE(unsupported(dp, batched, 90).find("batch 1 to 65535"), std::string::npos);
  EXPECT_EQ(unsupported(persistent, batched, 90), "");
  batched.batch = 0;
  EXPECT_NE(unsupported(persistent, batched, 90).find("batch >= 1"), std::string::npos);
  // 2^12 x 2^13 = 2^25 tiles of 128 x 128 per matrix: 64 matrices make 2^31, one tile too many.
  Problem many = bf16_problem(int64_t(1) << 19, int64_t(1) << 20, 8);
  many.batch = 64;
  EXPECT_NE(unsupported(persistent, many, 90).find("tiles x batch below 2^31"), std::string::npos)
      << unsupported(persistent, many, 90);
  many.batch = 63;
  EXPECT_EQ(unsupported(persistent, many, 90), "");
}

// Stream-K walks one 1D list of tiles x batch like persistent (batches included), so it has
// persistent's limits and not dp's grid limits.
TEST(Registry, MmaPipelinedStreamKGridLimits) {
  const Variant& streamk = variant("04_mma_pipelined:128x128:streamk");
  EXPECT_EQ(unsupported(streamk, bf16_problem(65535 * 128 + 1, 8, 8), 90), "");
  Problem batched = bf16_problem(8, 8, 8);
  batched.batch = 100000;
  EXPECT_EQ(unsupported(streamk, batched, 90), "");
  batched.batch = 0;
  EXPECT_EQ(unsupported(streamk, batched, 90), "04_mma_pipelined needs batch >= 1");
  Problem many = bf16_problem(int64_t(1) << 19, int64_t(1) << 20, 8);
  many.batch = 64;
  EXPECT_EQ(unsupported(streamk, many, 90),
            "04_mma_pipelined (streamk) needs tiles x batch below 2^31 (33554432 tiles of "
            "128x128 per matrix, batch 64)");
  many.batch = 63;
  EXPECT_EQ(unsupported(streamk, many, 90), "");
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

#if SHAPESCOPE_GPU_BUILD  // kernels::launch is the GPU side (kernels/launch.cu)
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
  Problem misaligned = bf16_problem(8, 8, 8);
  misaligned.off_a = 3;
  try {
    launch(variant("04_mma_pipelined:64x64:persistent"), misaligned, nullptr, nullptr, nullptr,
           nullptr);
    FAIL() << "launch accepted an A offset of 3 elements for 04";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInternal);
    EXPECT_NE(std::string(e.what()).find(kMmaAlignment), std::string::npos) << e.what();
  }
}

// Stream-K's partials and flags live in the caller's workspace: without one (the 6-argument
// launch, or a null or misaligned pointer) launch() refuses before it touches the GPU.
TEST(Registry, LaunchRefusesStreamKWithoutAWorkspace) {
  const Variant& streamk = variant("04_mma_pipelined:128x128:streamk");
  const std::string want =
      "kernels::launch(04_mma_pipelined:128x128:streamk): needs a 16-byte aligned device "
      "workspace (kernels::workspace_bytes())";
  const Problem p = bf16_problem(256, 256, 256);
  alignas(16) static char host[64];
  for (void* workspace : {static_cast<void*>(nullptr), static_cast<void*>(host + 8)}) {
    try {
      if (workspace == nullptr)
        launch(streamk, p, nullptr, nullptr, nullptr, nullptr);
      else
        launch(streamk, p, nullptr, nullptr, nullptr, nullptr, workspace, 1 << 30);
      FAIL() << "launch ran stream-K without a usable workspace";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kInternal);
      EXPECT_EQ(std::string(e.what()), want);
    }
  }
  // Unsupported problems are refused first, as for every variant.
  Problem tn = p;
  tn.layout = Layout::kTN;
  try {
    launch(streamk, tn, nullptr, nullptr, nullptr, nullptr);
    FAIL() << "launch accepted layout tn";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInternal);
    EXPECT_NE(std::string(e.what()).find("nn and nt"), std::string::npos) << e.what();
  }
}

// 05 is sm_90a code: compute capability 9.0 and nothing else, whatever the problem.
#endif

TEST(Registry, WgmmaTmaNeedsSm90a) {
  const Problem p = bf16_problem(64, 64, 64);
  int seen = 0;
  for (const Variant& v : registry()) {
    if (v.kernel != kWgmma) continue;
    ++seen;
    EXPECT_EQ(v.min_sm, 90) << v.key();
    EXPECT_EQ(v.max_sm, 90) << v.key();
    EXPECT_EQ(v.threads, 384) << v.key() << ": a producer and two consumer warpgroups";
    if (v.schedule != Schedule::kGrouped) {
      EXPECT_EQ(unsupported(v, p, 90), "") << v.key();
    }
    for (int cc : {80, 89, 100, 120})
      EXPECT_EQ(unsupported(v, p, cc),
                fmt::format("05_wgmma_tma needs compute capability 9.0 exactly (sm_90a code); "
                            "this GPU is {}.{}",
                            cc / 10, cc % 10))
          << v.key();
    EXPECT_EQ(unsupported_gpu(v, 90), "");
  }
  EXPECT_EQ(seen, 8) << "128x128 and 128x256, each dp, persistent, streamk and grouped";
  EXPECT_EQ(unsupported_gpu(naive(), 120), "") << "portable kernels run on newer GPUs";
  EXPECT_EQ(unsupported_gpu(naive(), 75),
            "01_naive needs compute capability 8.0 or newer; this GPU is 7.5");
}

// TMA copies 16-byte chunks like 04's cp.async; and every 05 grid is a 1D list of tiles, so dp
// has no grid-y or grid-z limits, only tiles x batch < 2^31.
TEST(Registry, WgmmaTmaLimits) {
  const Variant& dp = variant("05_wgmma_tma:128x256:dp");
  Problem p = bf16_problem(64, 64, 64, Layout::kNT);
  p.ldb = 68;
  EXPECT_TRUE(starts_with(unsupported(dp, p, 90),
                          "05_wgmma_tma needs lda, ldb and offsets that are multiples of 8"))
      << unsupported(dp, p, 90);
  EXPECT_EQ(unsupported(dp, bf16_problem(65535 * 128 + 1, 8, 8), 90), "");
  Problem batched = bf16_problem(8, 8, 8);
  batched.batch = 100000;
  EXPECT_EQ(unsupported(dp, batched, 90), "");
  Problem many = bf16_problem(int64_t(1) << 19, int64_t(1) << 20, 8);
  many.batch = 128;  // 2^12 x 2^12 tiles of 128 x 256 per matrix: 128 matrices make 2^31
  EXPECT_NE(unsupported(dp, many, 90).find("tiles x batch below 2^31"), std::string::npos)
      << unsupported(dp, many, 90);
}

// ---- The grouped schedule (05_wgmma_tma:*:grouped) -------------------------------------------

// An MoE layer's forward call: `rows` tokens per expert, N x K weights, packed.
Problem moe_call(const std::vector<int64_t>& rows, int64_t n, int64_t k, Layout layout) {
  std::vector<Problem> groups;
  for (int64_t m : rows) groups.push_back(bf16_problem(m, n, k, layout));
  return grouped_problem(groups);
}

const std::vector<int64_t> kUneven = {137, 1, 300, 64, 129};

TEST(Registry, GroupedRunsGroupedCallsOnly) {
  for (const char* key : {"05_wgmma_tma:128x256:grouped", "05_wgmma_tma:128x128:grouped"}) {
    const Variant& v = variant(key);
    EXPECT_EQ(v.threads, 384);
    EXPECT_EQ(v.dynamic_smem_bytes, variant(std::string(key).replace(std::string(key).rfind(':') + 1,
                                                                     std::string::npos, "dp"))
                                         .dynamic_smem_bytes);
    for (Layout layout : {Layout::kNN, Layout::kNT}) {
      EXPECT_EQ(unsupported(v, moe_call(kUneven, 1408, 2048, layout), 90), "") << key;
      // (grouped_problem() keeps a single problem as it is: a grouped call of one group is written so)
      Problem one = bf16_problem(1, 200, 72, layout);
      one.groups = {GroupShape{one.m, one.n, one.k, one.lda, one.ldb, one.ldc}};
      EXPECT_EQ(unsupported(v, one, 90), "") << key << " one group";
      EXPECT_EQ(unsupported(v, moe_call(std::vector<int64_t>(60, 137), 1408, 2048, layout), 90), "");
    }
    EXPECT_EQ(unsupported(v, bf16_problem(256, 256, 256), 90),
              "05_wgmma_tma (grouped) runs grouped calls only");
    EXPECT_EQ(unsupported(v, moe_call(kUneven, 1408, 2048, Layout::kNN), 80),
              "05_wgmma_tma needs compute capability 9.0 exactly (sm_90a code); this GPU is 8.0");
  }
  // Every other variant refuses a grouped call, naming the schedule that runs it.
  const Problem g = moe_call(kUneven, 1408, 2048, Layout::kNT);
  for (const Variant& v : registry()) {
    if (v.schedule == Schedule::kGrouped) continue;
    EXPECT_EQ(unsupported(v, g, v.min_sm),
              fmt::format("{} ({}) runs single GEMMs; grouped calls run on 05_wgmma_tma's grouped "
                          "schedule",
                          v.kernel, schedule_name(v.schedule)));
  }
}

TEST(Registry, GroupedNeedsAnMoeCallOfStackedRows) {
  const Variant& v = variant("05_wgmma_tma:128x256:grouped");
  Problem p = moe_call(kUneven, 1408, 2048, Layout::kNN);
  p.dtype = DType::kFp16;
  EXPECT_EQ(unsupported(v, p, 90), "05_wgmma_tma runs bf16 only");
  // tt is no MoE call.
  EXPECT_EQ(unsupported(v, moe_call(kUneven, 256, 64, Layout::kTT), 90),
            "05_wgmma_tma (grouped) runs layouts nn and nt (groups that differ in M: an MoE "
            "layer's forward and input-gradient calls) and tn (groups that differ in K: its weight "
            "gradient), not tt");
  // Groups that differ in more than M.
  std::vector<Problem> mixed = {bf16_problem(64, 256, 128), bf16_problem(64, 128, 128)};
  EXPECT_EQ(unsupported(v, grouped_problem(mixed), 90),
            "05_wgmma_tma (grouped) needs every group's N, K, lda, ldb, ldc equal (M may differ); "
            "group 1 is 64x128x128 ld 128 128 128, group 0 64x256x128 ld 128 256 256");
  // Rows that are not whole 16-byte chunks: K = 72 is fine, N = 200 too, N = 100 (ldb, ldc) not.
  EXPECT_EQ(unsupported(v, moe_call(kUneven, 200, 72, Layout::kNN), 90), "");
  EXPECT_EQ(unsupported(v, moe_call(kUneven, 100, 72, Layout::kNN), 90),
            "05_wgmma_tma (grouped) needs lda, ldb and ldc that are multiples of 8 elements (rows "
            "of 16-byte chunks, the groups' rows stacked); got 72, 100, 100");
  EXPECT_EQ(unsupported(v, moe_call(kUneven, 256, 100, Layout::kNT), 90),
            "05_wgmma_tma (grouped) needs lda, ldb and ldc that are multiples of 8 elements (rows "
            "of 16-byte chunks, the groups' rows stacked); got 100, 100, 256");
  EXPECT_EQ(unsupported(v, moe_call(std::vector<int64_t>(1025, 8), 256, 64, Layout::kNT), 90),
            "05_wgmma_tma (grouped) runs up to 1024 groups; this call has 1025");
  EXPECT_EQ(unsupported(v, moe_call(std::vector<int64_t>(1024, 8), 256, 64, Layout::kNT), 90), "");
}

// An MoE layer's weight-gradient call: tn, M x N per group, `k` tokens per expert (A_g stored K_g x M,
// B_g K_g x N), packed.
Problem wgrad_call(const std::vector<int64_t>& k, int64_t m, int64_t n) {
  std::vector<Problem> groups;
  for (int64_t kg : k) groups.push_back(bf16_problem(m, n, kg, Layout::kTN));
  Problem p = grouped_problem(groups);
  // (grouped_problem() keeps a single problem as it is: a grouped call of one group is written so)
  if (!p.grouped()) p.groups = {GroupShape{p.m, p.n, p.k, p.lda, p.ldb, p.ldc}};
  return p;
}

TEST(Registry, GroupedRunsTheWeightGradientsTnCalls) {
  for (const char* key : {"05_wgmma_tma:128x256:grouped", "05_wgmma_tma:128x128:grouped"}) {
    const Variant& v = variant(key);
    EXPECT_EQ(unsupported(v, wgrad_call(kUneven, 2048, 1408), 90), "") << key;
    EXPECT_EQ(unsupported(v, wgrad_call(std::vector<int64_t>(60, 137), 2816, 2048), 90), "") << key;
    EXPECT_EQ(unsupported(v, wgrad_call({1, 63, 64, 65, 137}, 200, 72), 90), "") << key;
    EXPECT_EQ(unsupported(v, wgrad_call({1}, 8, 8), 90), "") << key << " one group of K 1";
    EXPECT_EQ(unsupported(v, wgrad_call(kUneven, 2048, 1408), 80),
              "05_wgmma_tma needs compute capability 9.0 exactly (sm_90a code); this GPU is 8.0");
  }
  const Variant& v = variant("05_wgmma_tma:128x256:grouped");
  // Groups that differ in M (or N): not the weight gradient's form.
  std::vector<Problem> mixed = {bf16_problem(256, 128, 64, Layout::kTN),
                                bf16_problem(128, 128, 64, Layout::kTN)};
  EXPECT_EQ(unsupported(v, grouped_problem(mixed), 90),
            "05_wgmma_tma (grouped) tn needs every group's M, N, lda, ldb, ldc equal (K may "
            "differ); group 1 is 128x128x64 ld 128 128 128, group 0 256x128x64 ld 256 128 128");
  // M = 100 (lda) or N = 100 (ldb, ldc) are not whole 16-byte chunks; K = 3 is fine.
  EXPECT_EQ(unsupported(v, wgrad_call({3, 5}, 100, 256), 90),
            "05_wgmma_tma (grouped) needs lda, ldb and ldc that are multiples of 8 elements (rows "
            "of 16-byte chunks, the groups' rows stacked); got 100, 256, 256");
  EXPECT_EQ(unsupported(v, wgrad_call({3, 5}, 256, 100), 90),
            "05_wgmma_tma (grouped) needs lda, ldb and ldc that are multiples of 8 elements (rows "
            "of 16-byte chunks, the groups' rows stacked); got 256, 100, 100");
  EXPECT_EQ(unsupported(v, wgrad_call(std::vector<int64_t>(1025, 8), 256, 64), 90),
            "05_wgmma_tma (grouped) runs up to 1024 groups; this call has 1025");
  EXPECT_EQ(unsupported(v, wgrad_call(std::vector<int64_t>(1024, 8), 256, 64), 90), "");
  // All groups' C rows are one matrix the kernel indexes with int.
  EXPECT_EQ(unsupported(v, wgrad_call(std::vector<int64_t>(1024, 8), int64_t(1) << 21, 64), 90),
            "05_wgmma_tma (grouped) needs all groups' K, all groups' C rows, N and tiles below "
            "2^31");
}

// What the kernel assumes of a call the registry lets through: A's and C's groups are the rows of
// one matrix, B's lie one stride apart (kernels/launch.cu's grouped_args).
TEST(Registry, GroupedCallsTheRegistryTakesHaveStackedRows) {
  const Variant& v = variant("05_wgmma_tma:128x256:grouped");
  for (Layout layout : {Layout::kNN, Layout::kNT})
    for (const auto& [n, k] : {std::pair<int64_t, int64_t>{1408, 2048}, {200, 72}, {8, 8}}) {
      const Problem p = moe_call(kUneven, n, k, layout);
      ASSERT_EQ(unsupported(v, p, 90), "");
      int64_t rows = 0;
      for (size_t g = 0; g < p.groups.size(); ++g) {
        EXPECT_EQ(p.group_a_start(g), rows * p.lda) << g;
        EXPECT_EQ(p.group_c_start(g), rows * p.ldc) << g;
        EXPECT_EQ(p.group_b_start(g), int64_t(g) * p.b_rows() * p.ldb) << g;
        rows += p.groups[g].m;
      }
    }
  // tn (K per group): A's and B's groups are the stacked K rows of one matrix each, C's groups M x N
  // blocks one after the other (kernels/launch.cu's grouped_k_args, 05's grouped_k_maps).
  for (const auto& [m, n] : {std::pair<int64_t, int64_t>{2816, 2048}, {200, 72}, {8, 8}}) {
    const Problem p = wgrad_call(kUneven, m, n);
    ASSERT_EQ(unsupported(v, p, 90), "");
    int64_t k_rows = 0;
    for (size_t g = 0; g < p.groups.size(); ++g) {
      EXPECT_EQ(p.group_a_start(g), k_rows * p.lda) << g;
      EXPECT_EQ(p.group_b_start(g), k_rows * p.ldb) << g;
      EXPECT_EQ(p.group_c_start(g), int64_t(g) * m * p.ldc) << g;
      k_rows += p.groups[g].k;
    }
  }
}

// The grouped schedule's tiles: group by group, along N then M inside a group, each tile's rows
// among all groups' stacked rows and its group's end.
TEST(GroupTable, MapsTilesToGroupsAndRows) {
  // 137 rows: 2 tiles of 128 (the second 9 rows); 1 row: 1; 300: 3; N = 1408: 6 tiles of 256.
  for (const bool along_m : {false, true}) {  // nn: along N first; nt: along M first
    const GroupTable t = make_group_table({137, 1, 300}, 1408, 128, 256, along_m);
    EXPECT_EQ(t.count, 3);
    EXPECT_EQ(t.tiles_n, 6);
    EXPECT_EQ(t.tiles(), (2 + 1 + 3) * 6);
    EXPECT_EQ(t.rows(), 438);
    int expected = 0;
    for (int g = 0, first_row = 0; g < 3; ++g) {
      const int rows = std::vector<int>{137, 1, 300}[size_t(g)], tiles_m = (rows + 127) / 128;
      for (int outer = 0; outer < (along_m ? 6 : tiles_m); ++outer)
        for (int inner = 0; inner < (along_m ? tiles_m : 6); ++inner, ++expected) {
          const int m = along_m ? inner : outer, n = along_m ? outer : inner;
          const GroupTile tile = t.tile<128, 256>(expected);
          EXPECT_EQ(tile.group, g) << expected;
          EXPECT_EQ(tile.m0, first_row + m * 128) << expected << " along_m " << along_m;
          EXPECT_EQ(tile.n0, n * 256) << expected << " along_m " << along_m;
          EXPECT_EQ(tile.m_end, first_row + rows) << expected;
        }
      first_row += rows;
    }
    EXPECT_EQ(expected, t.tiles());
  }
  // One group; many groups of one row (binary search over 1024 starts).
  const GroupTable one = make_group_table({5}, 200, 128, 128);
  EXPECT_EQ(one.tiles(), 2);
  const GroupTile second = one.tile<128, 128>(1);
  EXPECT_EQ(second.n0, 128);
  EXPECT_EQ(second.m_end, 5);
  const GroupTable many = make_group_table(std::vector<int64_t>(GroupTable::kMaxGroups, 1), 8, 128, 128);
  for (int g = 0; g < GroupTable::kMaxGroups; ++g) {
    EXPECT_EQ(many.group_of(g), g);
    const GroupTile tile = many.tile<128, 128>(g);
    EXPECT_EQ(tile.m0, g);
    EXPECT_EQ(tile.m_end, g + 1);
  }
}

// The K form (tn): every group has the same tiles, along N then M; a tile's rows among all groups'
// stacked C rows (group g's from g x M), its group's K from the stacked K rows.
TEST(GroupTable, MapsTilesOfTheKFormToGroups) {
  // M = 300: 3 tiles of 128 (the last 44 rows); N = 1408: 6 tiles of 256.
  const GroupTable t = make_group_table_k({137, 1, 64}, 300, 1408, 128, 256);
  EXPECT_EQ(t.count, 3);
  EXPECT_EQ(t.m, 300);
  EXPECT_EQ(t.tiles_n, 6);
  EXPECT_EQ(t.tiles(), 3 * 3 * 6);
  EXPECT_EQ(t.k(0), 137);
  EXPECT_EQ(t.k(1), 1);
  EXPECT_EQ(t.k(2), 64);
  int expected = 0;
  for (int g = 0; g < 3; ++g)
    for (int m = 0; m < 3; ++m)
      for (int n = 0; n < 6; ++n, ++expected) {
        EXPECT_EQ(t.group_of_k(expected), g) << expected;
        const GroupTile tile = t.tile_k<128, 256>(expected);
        EXPECT_EQ(tile.group, g) << expected;
        EXPECT_EQ(tile.m0, g * 300 + m * 128) << expected;
        EXPECT_EQ(tile.n0, n * 256) << expected;
        EXPECT_EQ(tile.m_end, (g + 1) * 300) << expected;
      }
  const GroupTable many = make_group_table_k(std::vector<int64_t>(GroupTable::kMaxGroups, 1), 8, 8, 128, 128);
  EXPECT_EQ(many.tiles(), GroupTable::kMaxGroups);
  const GroupTile last = many.tile_k<128, 128>(GroupTable::kMaxGroups - 1);
  EXPECT_EQ(last.m0, (GroupTable::kMaxGroups - 1) * 8);
}

}  // namespace
}  // namespace shapescope::kernels
