// Workloads from PyTorch profiler traces: the stride -> layout/ld rule, merging, op nesting,
// kernel linking, each kind of bad input, and two real traces recorded on an H100 (GPT-2 small and
// a 2-layer Mixtral, one training step each) whose GEMM calls per shape must equal their GEMM
// kernels per shape (counted from the kernel side by scripts/trim_trace.py).
#include <algorithm>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/fp8_recipe.hpp"

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "common/error.hpp"
#include "model/pad.hpp"
#include "model/profile.hpp"
#include "model/trace_import.hpp"
#include "model_util.hpp"

namespace shapescope {
namespace {

using Json = nlohmann::json;

// --- the stride rule ---

TEST(TraceLayout, RowMajorTransposedSlicedAndCopied) {
  // [M, K] = [12288, 768] row-major: stored as it is, ld = 768.
  auto l = operand_layout({12288, 768, 768, 1});
  ASSERT_TRUE(l);
  EXPECT_FALSE(l->transposed);
  EXPECT_EQ(l->ld, 768);
  // weight.t() of a [2304, 768] weight: a [768, 2304] view with strides [1, 768].
  l = operand_layout({768, 2304, 1, 768});
  ASSERT_TRUE(l);
  EXPECT_TRUE(l->transposed);
  EXPECT_EQ(l->ld, 768);
  // q = qkv[:, :768] of a [T, 2304] tensor: rows 768 long, 2304 apart: the slice keeps its ld.
  l = operand_layout({4096, 768, 2304, 1});
  ASSERT_TRUE(l);
  EXPECT_FALSE(l->transposed);
  EXPECT_EQ(l->ld, 2304);
  // A transposed slice: [768, T] view of the same slice.
  l = operand_layout({768, 4096, 1, 2304});
  ASSERT_TRUE(l);
  EXPECT_TRUE(l->transposed);
  EXPECT_EQ(l->ld, 2304);
  // x[:, ::2]: neither stride is 1; PyTorch copies it first.
  EXPECT_FALSE(operand_layout({64, 32, 64, 2}));
  // An ld shorter than the row (overlapping rows, e.g. an expand): not a matrix cuBLAS reads.
  EXPECT_FALSE(operand_layout({64, 32, 16, 1}));
  // One column: stride 1 both ways still reads as row-major.
  l = operand_layout({64, 1, 1, 1});
  ASSERT_TRUE(l);
  EXPECT_FALSE(l->transposed);
}

// --- hand-written traces ---

// A cpu_op event; `ext` links kernels to it.
Json op(const std::string& name, double ts, double dur, int64_t ext, const Json& dims, const Json& strides,
        const Json& types, int tid = 1) {
  Json e = {{"ph", "X"}, {"cat", "cpu_op"}, {"name", name}, {"pid", 7}, {"tid", tid}, {"ts", ts}, {"dur", dur}};
  e["args"] = {{"External id", ext}, {"Input Dims", dims}, {"Input type", types}};
  if (!strides.is_null()) e["args"]["Input Strides"] = strides;
  return e;
}

// A launch on the CPU and its kernel on the GPU, sharing a correlation id.
void kernel(Json& events, int64_t ext, int64_t correlation, double dur, const std::string& name = "nvjet_sm90_tst") {
  events.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"pid", 7}, {"tid", 1},
                    {"ts", 0}, {"dur", 1}, {"args", {{"External id", ext}, {"correlation", correlation}}}});
  events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", name}, {"pid", 0}, {"tid", 7}, {"ts", 0}, {"dur", dur},
                    {"args", {{"correlation", correlation}}}});
}

Workload parse(const Json& events) { return parse_torch_trace(Json{{"traceEvents", events}}.dump(), "--trace: 't.json'"); }

const Json kBf16x2 = {"c10::BFloat16", "c10::BFloat16"};

TEST(TraceImport, LinearForwardAndBackwardWithTheirLayouts) {
  Json ev = Json::array();
  // Forward: aten::linear -> aten::addmm (x [4096, 768] @ W.t(), W [2304, 768]); only addmm counts.
  ev.push_back(op("aten::linear", 100, 50, 1, {{4096, 768}, {2304, 768}, {2304}}, {{768, 1}, {768, 1}, {1}},
                  {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16"}));
  ev.push_back(op("aten::addmm", 110, 30, 2, {{2304}, {4096, 768}, {768, 2304}, {}, {}},
                  {{1}, {768, 1}, {1, 768}, {}, {}}, {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"}));
  kernel(ev, 2, 1000, 40.0);
  // Backward on autograd's thread: dgrad dy @ W (nn), wgrad dy.t() @ x (tn), each an aten::mm.
  ev.push_back(op("autograd::engine::evaluate_function: AddmmBackward0", 300, 100, 3, Json::array(), Json::array(),
                  Json::array(), 2));
  ev.push_back(op("aten::mm", 310, 20, 4, {{4096, 2304}, {2304, 768}}, {{2304, 1}, {768, 1}}, kBf16x2, 2));
  kernel(ev, 4, 1001, 41.0);
  ev.push_back(op("aten::mm", 340, 20, 5, {{2304, 4096}, {4096, 768}}, {{1, 2304}, {768, 1}}, kBf16x2, 2));
  kernel(ev, 5, 1002, 42.0);
  kernel(ev, 5, 1003, 3.0, "void cublasLt::splitKreduce_kernel");  // a split-K GEMM launches two kernels

  const Workload w = parse(ev);
  ASSERT_EQ(w.gemms.size(), 3u);
  EXPECT_TRUE(w.unmapped.empty());
  const Problem& fwd = w.gemms[0].problems.at(0);
  EXPECT_EQ(gemm_string(fwd), "4096x2304x768 nt");
  EXPECT_EQ(fwd.lda, 768);
  EXPECT_EQ(fwd.ldb, 768);
  EXPECT_EQ(fwd.ldc, 2304);
  EXPECT_EQ(w.gemms[0].origin, "aten::addmm");
  EXPECT_DOUBLE_EQ(*w.gemms[0].kernel_us, 40.0);
  EXPECT_EQ(gemm_string(w.gemms[1].problems.at(0)), "4096x768x2304 nn");
  EXPECT_EQ(gemm_string(w.gemms[2].problems.at(0)), "2304x768x4096 tn");
  EXPECT_EQ(w.gemms[2].problems.at(0).lda, 2304);
  EXPECT_EQ(w.gemms[2].kernels, 2);
  EXPECT_DOUBLE_EQ(*w.gemms[2].kernel_us, 45.0);
  EXPECT_EQ(w.gemms[2].kernel_names, (std::vector<std::string>{"nvjet_sm90_tst", "void cublasLt::splitKreduce_kernel"}));
  EXPECT_EQ(w.calls(), 3);
  EXPECT_DOUBLE_EQ(*w.kernel_us(), 126.0);
}

TEST(TraceImport, NestedOpsWithTheSameTimesCountTheInnerOne) {
  Json ev = Json::array();
  // A clock too coarse to separate them: linear, matmul and mm with one start and end, listed inner first.
  ev.push_back(op("aten::mm", 100, 20, 3, {{64, 32}, {32, 16}}, {{32, 1}, {1, 32}}, kBf16x2));
  ev.push_back(op("aten::matmul", 100, 20, 2, {{64, 32}, {32, 16}}, {{32, 1}, {1, 32}}, kBf16x2));
  ev.push_back(op("aten::linear", 100, 20, 1, {{64, 32}, {16, 32}}, {{32, 1}, {32, 1}}, kBf16x2));
  kernel(ev, 3, 1, 2.0);
  const Workload w = parse(ev);
  ASSERT_EQ(w.gemms.size(), 1u);
  EXPECT_EQ(w.gemms[0].origin, "aten::mm");
  EXPECT_EQ(w.gemms[0].count, 1);
  EXPECT_TRUE(w.unmapped.empty());
}

TEST(TraceImport, IdenticalCallsMergeTheirCountsAndTimes) {
  Json ev = Json::array();
  for (int layer = 0; layer < 3; ++layer) {
    ev.push_back(op("aten::mm", 100 * layer, 10, 10 + layer, {{512, 1024}, {1024, 256}}, {{1024, 1}, {256, 1}}, kBf16x2));
    kernel(ev, 10 + layer, 2000 + layer, 5.0 + layer);
  }
  // The same shape through addmm merges with it; another ld does not.
  ev.push_back(op("aten::addmm", 400, 10, 20, {{256}, {512, 1024}, {1024, 256}, {}, {}}, {{1}, {1024, 1}, {256, 1}, {}, {}},
                  {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"}));
  kernel(ev, 20, 2100, 1.0);
  ev.push_back(op("aten::mm", 500, 10, 21, {{512, 1024}, {1024, 256}}, {{3072, 1}, {256, 1}}, kBf16x2));
  kernel(ev, 21, 2101, 1.0);
  const Workload w = parse(ev);
  ASSERT_EQ(w.gemms.size(), 2u);
  EXPECT_EQ(w.gemms[0].count, 4);
  EXPECT_EQ(w.gemms[0].origin, "aten::mm+aten::addmm");
  EXPECT_DOUBLE_EQ(*w.gemms[0].kernel_us, 5 + 6 + 7 + 1);
  EXPECT_EQ(w.gemms[0].kernels, 4);
  EXPECT_EQ(w.gemms[1].problems[0].lda, 3072);  // a slice of a wider tensor keeps its ld
}

TEST(TraceImport, BatchedMatmulAndBroadcast) {
  Json ev = Json::array();
  // QK^T: q [B*H, T, D] @ k.transpose(-2, -1) [B*H, D, T] (k stored [B*H, T, D]).
  ev.push_back(op("aten::bmm", 0, 10, 1, {{96, 1024, 64}, {96, 64, 1024}}, {{65536, 64, 1}, {65536, 1, 64}}, kBf16x2));
  kernel(ev, 1, 1, 10);
  // matmul of [4, 128, 64] @ [64, 32]: folded into one [512, 64] @ [64, 32] GEMM.
  ev.push_back(op("aten::matmul", 100, 10, 2, {{4, 128, 64}, {64, 32}}, {{8192, 64, 1}, {32, 1}}, kBf16x2));
  kernel(ev, 2, 2, 1);
  // bmm with B broadcast over the batch (expand: batch stride 0).
  ev.push_back(op("aten::bmm", 200, 10, 3, {{8, 16, 32}, {8, 32, 48}}, {{512, 32, 1}, {0, 48, 1}}, kBf16x2));
  kernel(ev, 3, 3, 1);
  // matmul of [2, 3, 16, 32] @ [32, 8] with a transposed input cannot fold: a batched GEMM of 6.
  ev.push_back(op("aten::matmul", 300, 10, 4, {{2, 3, 16, 32}, {3, 32, 8}}, {{1536, 512, 1, 16}, {256, 8, 1}}, kBf16x2));
  kernel(ev, 4, 4, 1);
  const Workload w = parse(ev);
  ASSERT_EQ(w.gemms.size(), 4u);
  const Problem& qk = w.gemms[0].problems[0];
  EXPECT_EQ(gemm_string(qk), "1024x1024x64 nt");
  EXPECT_EQ(qk.batch, 96);
  EXPECT_EQ(qk.ldb, 64);
  EXPECT_EQ(gemm_string(w.gemms[1].problems[0]), "512x32x64 nn");
  EXPECT_EQ(w.gemms[1].problems[0].batch, 1);
  EXPECT_EQ(w.gemms[2].problems[0].batch, 8);
  const Problem& broadcast = w.gemms[3].problems[0];
  EXPECT_EQ(gemm_string(broadcast), "16x8x32 tn");
  EXPECT_EQ(broadcast.batch, 6);
  ASSERT_GE(w.notes.size(), 2u);
  EXPECT_NE(w.notes[0].find("B broadcast over the batch (batch stride 0)"), std::string::npos) << w.notes[0];
  EXPECT_NE(w.notes[1].find("broadcast over the batch (ranks 4 and 3)"), std::string::npos) << w.notes[1];
}

TEST(TraceImport, GroupedMmOfMoeExperts) {
  Json ev = Json::array();
  const Json types = {"c10::BFloat16", "c10::BFloat16", "int", "", ""};
  // Forward: tokens x top-k = 8203 rows over 8 experts, W [8, 4096, 28672] read transposed.
  ev.push_back(op("aten::_grouped_mm", 0, 10, 1, {{8203, 4096}, {8, 4096, 28672}, {8}, {}, {}},
                  {{4096, 1}, {117440512, 1, 4096}, {1}, {}, {}}, types));
  kernel(ev, 1, 1, 100);
  // Weight gradient: [4096, sum K] x [sum K, 14336], K split over the experts.
  ev.push_back(op("aten::_grouped_mm", 100, 10, 2, {{4096, 8192}, {8192, 14336}, {8}, {}, {}},
                  {{1, 4096}, {14336, 1}, {1}, {}, {}}, types));
  kernel(ev, 2, 2, 100);
  const Workload w = parse(ev);
  ASSERT_EQ(w.gemms.size(), 2u);
  const WorkloadGemm& fwd = w.gemms[0];
  ASSERT_EQ(fwd.problems.size(), 8u);
  EXPECT_TRUE(fwd.group_rows_estimated);
  // The offsets are not in the trace: 8203 = 8 x 1025 + 3, one row more for the first 3 experts.
  EXPECT_EQ(fwd.problems[2].m, 1026);
  EXPECT_EQ(fwd.problems[3].m, 1025);
  EXPECT_EQ(fwd.shape_text(), "grouped 8 x 1025..1026x28672x4096 nt");
  const WorkloadGemm& wgrad = w.gemms[1];
  ASSERT_EQ(wgrad.problems.size(), 8u);
  EXPECT_EQ(gemm_string(wgrad.problems[0]), "4096x14336x1024 tn");
}

// Found by fuzz_trace: 82,147,483,647 offsets made a vector of that many group sizes (out of
// memory); so would as many groups of 3-D operands.
TEST(TraceImport, AGroupedMmOfBillionsOfGroupsIsUnmapped) {
  Json ev = Json::array();
  const Json types = {"c10::BFloat16", "c10::BFloat16", "int", "", ""};
  ev.push_back(op("aten::_grouped_mm", 0, 10, 1, {{8192, 4096}, {8, 4096, 28672}, {82147483647}, {}, {}},
                  {{4096, 1}, {117440512, 1, 4096}, {1}, {}, {}}, types));
  ev.push_back(op("aten::_grouped_mm", 100, 10, 2, {{4000000000, 64, 64}, {4000000000, 64, 64}},
                  {{4096, 64, 1}, {4096, 64, 1}}, kBf16x2));
  const Workload w = parse(ev);
  EXPECT_TRUE(w.gemms.empty());
  ASSERT_EQ(w.unmapped.size(), 2u);
  EXPECT_NE(w.unmapped[0].reason.find("82147483647 groups (at most 65536)"), std::string::npos) << w.unmapped[0].reason;
  EXPECT_NE(w.unmapped[1].reason.find("4000000000 groups (at most 65536)"), std::string::npos) << w.unmapped[1].reason;
}

TEST(TraceImport, UnmappableOpsAreCountedAndListed) {
  Json ev = Json::array();
  ev.push_back(op("aten::mm", 0, 10, 1, {{64, 64}, {64, 64}}, {{64, 1}, {64, 1}}, {"double", "double"}));
  kernel(ev, 1, 1, 1);
  ev.push_back(op("aten::mm", 100, 10, 2, {{64, 32}, {32, 16}}, {{64, 2}, {16, 1}}, kBf16x2));
  kernel(ev, 2, 2, 1);
  ev.push_back(op("aten::mm", 200, 10, 3, {{64, 64}, {64, 64}}, {{64, 1}, {64, 1}}, kBf16x2));  // no kernel: CPU tensors
  ev.push_back(op("aten::matmul", 300, 10, 4, {{64}, {64, 32}}, {{1}, {32, 1}}, kBf16x2));
  kernel(ev, 4, 4, 1);
  ev.push_back(op("aten::mm", 400, 10, 5, {{64, 64}, {64, 64}}, {{64, 1}, {64, 1}}, {"c10::Half", "c10::BFloat16"}));
  kernel(ev, 5, 5, 1);
  Json no_dims = op("aten::mm", 500, 10, 6, Json::array(), Json::array(), Json::array());
  no_dims["args"].erase("Input Dims");
  ev.push_back(no_dims);
  kernel(ev, 6, 6, 2.5);
  ev.push_back(op("aten::mm", 600, 10, 7, {{64, 64}, {64, 64}}, {{64, 1}, {64, 1}}, kBf16x2));
  kernel(ev, 7, 7, 1);
  ev.push_back(op("aten::mm", 700, 10, 8, {{-5, 64}, {64, 64}}, {{64, 1}, {64, 1}}, kBf16x2));
  kernel(ev, 8, 8, 1);
  const Workload w = parse(ev);
  EXPECT_EQ(w.calls(), 1);
  EXPECT_EQ(w.unmapped_count(), 7);
  std::string all;
  for (const UnmappedOp& u : w.unmapped) all += u.op + ": " + u.reason + "\n";
  for (const char* words : {"input type 'double' is not one shapescope runs", "A has strides [64, 2]",
                            "no GPU kernel is linked", "a matrix-vector product", "two types ('c10::Half'",
                            "no \"Input Dims\"", "a dimension is -5"})
    EXPECT_NE(all.find(words), std::string::npos) << words << "\n" << all;
  EXPECT_EQ(all.find("a dimension is 0"), std::string::npos) << all;
  // What the unmapped op cost is kept.
  EXPECT_TRUE(std::any_of(w.unmapped.begin(), w.unmapped.end(),
                          [](const UnmappedOp& u) { return u.kernel_us && *u.kernel_us == 2.5; }));  // what the unmapped op cost is kept
}

// The GPU the trace ran on, and its kernels of ops that are not GEMMs: outside every total, said once.
TEST(TraceImport, TheRecordingGpuAndTheKernelsOfOtherOps) {
  Json ev = Json::array();
  ev.push_back(op("aten::mm", 0, 10, 1, {{64, 64}, {64, 64}}, {{64, 1}, {64, 1}}, kBf16x2));
  kernel(ev, 1, 1, 30.0);
  ev.push_back(op("aten::mm", 100, 10, 2, {{64, 64}, {64, 64}}, {{64, 1}, {64, 1}}, {"double", "double"}));
  kernel(ev, 2, 2, 5.0);  // an unmapped GEMM op: its kernels are a GEMM's, not another op's
  ev.push_back(op("aten::softmax", 200, 10, 3, Json::array(), Json::array(), Json::array()));
  kernel(ev, 3, 3, 50.0, "void at::native::cunn_SoftMaxForward");
  kernel(ev, 99, 4, 15.0, "void at::native::vectorized_elementwise_kernel");  // linked to no op at all
  Json trace = {{"traceEvents", ev},
                {"deviceProperties", {{{"id", 0}, {"name", "NVIDIA H100 80GB HBM3"}, {"numSms", 132}}}}};
  const Workload w = parse_torch_trace(trace.dump(), "--trace: 't.json'");
  EXPECT_EQ(w.device, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(w.device_sms, 132);
  ASSERT_TRUE(w.all_kernels_us);
  EXPECT_DOUBLE_EQ(*w.all_kernels_us, 100.0);
  ProfileRow row;
  row.gemm = 0;
  row.trace_step_us = 30.0;
  const ProfileTotals t = profile_totals(w, {row});
  ASSERT_TRUE(t.other_kernels_us);
  EXPECT_DOUBLE_EQ(*t.all_kernels_us, 100.0);
  EXPECT_DOUBLE_EQ(*t.other_kernels_us, 65.0);  // softmax and the elementwise kernel, not the two GEMM ops'
  DeviceContext d;
  d.gpu_name = "NVIDIA H100 80GB HBM3";
  d.sm_count = 132;
  EXPECT_EQ(trace_gpu_match(w, d), GpuMatch::kSame);
  d.sm_count = 114;  // an H100 PCIe would say another name too; a MIG slice says fewer SMs
  EXPECT_EQ(trace_gpu_match(w, d), GpuMatch::kOther);
  d.gpu_name = "NVIDIA H200";
  d.sm_count = 132;
  EXPECT_EQ(trace_gpu_match(w, d), GpuMatch::kOther);
  // No deviceProperties, no kernels: nothing to say.
  const Workload bare = parse(Json::array({op("aten::mm", 0, 10, 1, {{64, 64}, {64, 64}}, {{64, 1}, {64, 1}}, kBf16x2)}));
  EXPECT_EQ(trace_gpu_match(bare, d), GpuMatch::kUnknown);
  EXPECT_FALSE(bare.all_kernels_us);
  EXPECT_FALSE(profile_totals(bare, {}).other_kernels_us);
}

TEST(TraceImport, MissingStridesAreReadAsContiguousWithANote) {
  Json ev = Json::array();
  ev.push_back(op("aten::mm", 0, 10, 1, {{64, 32}, {32, 16}}, nullptr, kBf16x2));
  const Workload w = parse(ev);  // no kernels at all: CPU-only trace, no times
  ASSERT_EQ(w.gemms.size(), 1u);
  EXPECT_EQ(gemm_string(w.gemms[0].problems[0]), "64x16x32 nn");
  EXPECT_FALSE(w.gemms[0].kernel_us);
  ASSERT_EQ(w.notes.size(), 2u);
  EXPECT_NE(w.notes[0].find("no \"Input Strides\""), std::string::npos);
  EXPECT_NE(w.notes[1].find("no GPU kernels in the trace"), std::string::npos);
}

void expect_error(const std::string& text, const std::string& words) {
  expect_usage_error([&] { parse_torch_trace(text, "--trace: 't.json'"); }, "--trace: 't.json'", words);
}

TEST(TraceImport, BadTracesAreOneLine) {
  expect_error("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"aten::mm\"", "is not valid JSON");  // truncated
  expect_error("", "is not valid JSON");
  expect_error("{\"schemaVersion\": 1}", "is not a Chrome trace (no \"traceEvents\" array)");
  expect_error("42", "is not a Chrome trace");
  // Recorded without record_shapes: GEMM ops without Input Dims. The message says how to record one.
  Json ev = Json::array();
  for (int i = 0; i < 3; ++i) {
    Json e = op("aten::mm", 10 * i, 5, i, Json::array(), Json::array(), Json::array());
    e["args"] = {{"External id", i}};
    ev.push_back(e);
  }
  expect_error(Json{{"traceEvents", ev}}.dump(), "was recorded without shapes: its 3 GEMM ops have no \"Input Dims\"; "
                                                 "record one with torch.profiler.profile(");
  expect_error(Json{{"traceEvents", ev}}.dump(), "record_shapes=True) and prof.export_chrome_trace");
}

TEST(TraceImport, ScaledMmBaddbmmAndProfilerSteps) {
  Json ev = Json::array();
  // FP8: x [M, K] e4m3 @ W.t() (cuBLASLt's FP8 GEMMs take B column-major: nt), with its scales.
  ev.push_back(op("aten::_scaled_mm", 0, 10, 1, {{256, 512}, {512, 1024}, {}, {}, {}, {}},
                  {{512, 1}, {1, 512}, {}, {}, {}, {}},
                  {"c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float", "float", "", ""}));
  kernel(ev, 1, 1, 3);
  // baddbmm(self, batch1, batch2): A and B are the second and third inputs.
  ev.push_back(op("aten::baddbmm", 100, 10, 2, {{8, 64, 32}, {8, 64, 16}, {8, 16, 32}, {}, {}},
                  {{2048, 32, 1}, {1024, 16, 1}, {512, 32, 1}, {}, {}}, {"float", "float", "float", "Scalar", "Scalar"}));
  kernel(ev, 2, 2, 3);
  // e5m2 (the gradients' FP8) with one scale per tensor: recipe tensor:e5m2xe4m3, its own GEMM.
  ev.push_back(op("aten::_scaled_mm", 200, 10, 3, {{256, 512}, {512, 1024}}, {{512, 1}, {1, 512}},
                  {"c10::Float8_e5m2", "c10::Float8_e4m3fn"}));
  kernel(ev, 3, 3, 3);
  for (int step = 0; step < 2; ++step)
    ev.push_back({{"ph", "X"}, {"cat", "user_annotation"}, {"name", fmt::format("ProfilerStep#{}", step + 4)},
                  {"pid", 7}, {"tid", 1}, {"ts", 1000 * step}, {"dur", 900}});
  const Workload w = parse(ev);
  ASSERT_EQ(w.gemms.size(), 3u);
  EXPECT_EQ(gemm_string(w.gemms[0].problems[0]), "256x1024x512 nt");
  EXPECT_EQ(w.gemms[0].problems[0].dtype, DType::kFp8);
  EXPECT_EQ(recipe_text(w.gemms[0].problems[0].recipe), "tensor");
  EXPECT_EQ(gemm_string(w.gemms[1].problems[0]), "64x32x16 nn");
  EXPECT_EQ(w.gemms[1].problems[0].batch, 8);
  EXPECT_EQ(w.gemms[1].problems[0].dtype, DType::kFp32);
  EXPECT_EQ(recipe_text(w.gemms[2].problems[0].recipe), "tensor:e5m2xe4m3");
  EXPECT_TRUE(w.unmapped.empty());
  EXPECT_EQ(w.steps, 2);
  EXPECT_NE(w.notes.back().find("2 profiler steps"), std::string::npos);
}

// torch._scaled_mm's recipe from its scales' shapes (as PyTorch dispatches them): x [256, 640] e4m3
// @ W.t() (W [1000, 640]): row [256, 1] x [1, 1000]; block [256, 5] x [5, 8] (1x128 activations,
// 128x128 weights, the padded K blocks seen as stored); block-1x128 [256, 5] x [5, 1000]; scales
// of no recipe are one unmapped line with the shapes.
TEST(TraceImport, ScaledMmReadsItsRecipeFromItsScalesShapes) {
  const std::vector<std::pair<Json, Json>> scales = {
      {Json::array({256, 1}), Json::array({1, 1000})},
      {Json::array({256, 5}), Json::array({5, 8})},
      {Json::array({256, 5}), Json::array({5, 1000})},
      {Json::array({2, 5}), Json::array({5, 1000})}};
  Json ev = Json::array();
  int id = 1;
  for (const auto& [sa, sb] : scales) {
    ev.push_back(op("aten::_scaled_mm", 100 * id, 10, id, {{256, 640}, {640, 1000}, sa, sb},
                    {{640, 1}, {1, 640}, {1, 256}, {1, 8}},
                    {"c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float", "float"}));
    kernel(ev, id, id, 3);
    ++id;
  }
  const Workload w = parse(ev);
  ASSERT_EQ(w.gemms.size(), 3u);
  EXPECT_EQ(recipe_text(w.gemms[0].problems[0].recipe), "row");
  EXPECT_EQ(recipe_text(w.gemms[1].problems[0].recipe), "block");
  EXPECT_EQ(recipe_text(w.gemms[2].problems[0].recipe), "block-1x128");
  for (const WorkloadGemm& g : w.gemms) EXPECT_EQ(gemm_string(g.problems[0]), "256x1000x640 nt");
  ASSERT_EQ(w.unmapped.size(), 1u);
  EXPECT_NE(w.unmapped[0].reason.find("scales [2, 5] and [5, 1000] for a 256x1000x640 GEMM are no fp8 recipe"),
            std::string::npos)
      << w.unmapped[0].reason;
}

TEST(TraceImport, GzipIsRefusedWithHowToReadIt) {
  const std::string path = ::testing::TempDir() + "shapescope_trace.json.gz";
  std::ofstream(path, std::ios::binary) << std::string("\x1f\x8b\x08\x00", 4);
  expect_usage_error([&] { load_torch_trace(path, "--trace: 'x.json.gz'"); }, "--trace: 'x.json.gz'",
                     "is gzip-compressed; decompress it first (gunzip -k FILE)");
  std::remove(path.c_str());
  expect_usage_error([&] { load_torch_trace("/nonexistent/t.json", "--trace: 't.json'"); }, "--trace: 't.json'",
                     "cannot be read");
}

TEST(TraceImport, NoGemmOpIsAnEmptyWorkloadWithANote) {
  const Workload w = parse(Json::array({op("aten::add", 0, 1, 1, {{4}, {4}}, {{1}, {1}}, kBf16x2)}));
  EXPECT_TRUE(w.gemms.empty());
  ASSERT_EQ(w.notes.size(), 1u);
  EXPECT_NE(w.notes[0].find("no GEMM op"), std::string::npos);
}

// --- real traces ---

// GEMM kernels per shape, from scripts/trim_trace.py: (m, n, k, batch, groups) -> kernels. A
// grouped call's m, n, k hold the totals over its groups (one of them is split), so grouped calls
// are compared by groups and M x N x K.
using ShapeKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>;

std::map<ShapeKey, int64_t> kernels_per_shape(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header
  std::map<ShapeKey, int64_t> out;
  while (std::getline(in, line)) {
    std::stringstream s(line);
    int64_t v[6];
    char comma;
    s >> v[0] >> comma >> v[1] >> comma >> v[2] >> comma >> v[3] >> comma >> v[4] >> comma >> v[5];
    const ShapeKey key = v[4] > 1 ? ShapeKey{v[0] * v[1] * v[2], 0, 0, v[3], v[4]} : ShapeKey{v[0], v[1], v[2], v[3], 1};
    out[key] += v[5];
  }
  return out;
}

std::map<ShapeKey, int64_t> calls_per_shape(const Workload& w) {
  std::map<ShapeKey, int64_t> out;
  for (const WorkloadGemm& g : w.gemms) {
    const Problem& p = g.problems[0];
    if (g.grouped()) {
      int64_t mnk = 0;
      for (const Problem& q : g.problems) mnk += q.m * q.n * q.k;
      out[{mnk, 0, 0, p.batch, int64_t(g.problems.size())}] += g.count;
    } else {
      out[{p.m, p.n, p.k, p.batch, 1}] += g.count;
    }
  }
  return out;
}

Workload real_trace(const std::string& name) {
  const std::string path = std::string(SHAPESCOPE_TEST_DATA) + "/traces/" + name + ".json";
  return load_torch_trace(path, "--trace: '" + name + ".json'");
}

TEST(TraceImportReal, Gpt2TrainingStepCallsMatchItsGemmKernels) {
  const Workload w = real_trace("gpt2");
  EXPECT_EQ(calls_per_shape(w), kernels_per_shape(std::string(SHAPESCOPE_TEST_DATA) + "/traces/gpt2.kernels.csv"));
  EXPECT_TRUE(w.unmapped.empty());
  EXPECT_EQ(w.calls(), 147);  // 12 layers x 4 Conv1D x 3 passes + lm_head x 3
  EXPECT_EQ(w.device, "NVIDIA H100 80GB HBM3");
  std::map<std::string, int64_t> by_shape;
  for (const WorkloadGemm& g : w.gemms) by_shape[gemm_string(g.problems[0])] += g.count;
  // HF GPT-2's Conv1D is addmm(x, W) with W [in, out]: its forward is nn, its dgrad nt, its wgrad tn.
  EXPECT_EQ(by_shape["12288x2304x768 nn"], 12);
  EXPECT_EQ(by_shape["12288x768x2304 nt"], 12);
  EXPECT_EQ(by_shape["768x2304x12288 tn"], 12);
  // The tied LM head (nn.Linear: linear -> matmul -> mm, counted once) and its two gradients.
  EXPECT_EQ(by_shape["12288x50257x768 nt"], 1);
  EXPECT_EQ(by_shape["50257x768x12288 tn"], 1);
  EXPECT_EQ(by_shape["12288x768x50257 nn"], 1);
  // The trace's own GEMM kernel time: 31.76 ms, of which the vocabulary's three GEMMs take 22.6 ms.
  EXPECT_NEAR(*w.kernel_us(), 31760.8, 0.5);
}

TEST(TraceImportReal, MixtralTrainingStepCallsMatchItsGemmKernels) {
  const Workload w = real_trace("mixtral-2l");
  EXPECT_EQ(calls_per_shape(w),
            kernels_per_shape(std::string(SHAPESCOPE_TEST_DATA) + "/traces/mixtral-2l.kernels.csv"));
  EXPECT_TRUE(w.unmapped.empty());
  int64_t grouped = 0;
  for (const WorkloadGemm& g : w.gemms) {
    if (!g.grouped()) continue;
    grouped += g.count;
    EXPECT_EQ(g.problems.size(), 8u);
    EXPECT_TRUE(g.group_rows_estimated);
  }
  // 2 layers x (gate_up and down) x (fwd, dgrad, wgrad) as torch._grouped_mm.
  EXPECT_EQ(grouped, 12);
}


// --- sizes as knobs, where no config names them ---

TEST(WorkloadKnobs, TheVocabularyOfGpt2sTraceIsOneKnobOfThreeGemms) {
  const Workload w = real_trace("gpt2");
  const std::vector<DimensionKnob> knobs = dimension_knobs(w);
  const auto vocab = std::find_if(knobs.begin(), knobs.end(), [](const DimensionKnob& k) { return k.value == 50257; });
  ASSERT_NE(vocab, knobs.end());
  ASSERT_EQ(vocab->uses.size(), 3u);  // N of the LM head's forward, M of its wgrad, K of its dgrad
  EXPECT_EQ(vocab->calls, 3);
  std::set<Dim> dims;
  for (const DimensionUse& u : vocab->uses) dims.insert(u.dim);
  EXPECT_EQ(dims, (std::set<Dim>{Dim::kM, Dim::kN, Dim::kK}));
  // 768 is in every GEMM of the step.
  EXPECT_EQ(knobs.front().value, 768);
  EXPECT_EQ(knobs.front().calls, 147);

  // As a pad choice: probed by the LM head's largest call, its candidates are pad's for vocab_size.
  const ChoiceInfo choice = knob_choice(w, *vocab);
  EXPECT_EQ(choice.choice, Choice::kSize);
  EXPECT_EQ(choice.name, "50257");
  std::vector<int64_t> sizes;
  for (const PadCandidate& c : pad_candidates(ModelConfig{}, {12288, true, 1, DType::kBf16}, choice, Annotation{}))
    sizes.push_back(c.value);
  EXPECT_EQ(sizes, (std::vector<int64_t>{50264, 50272, 50304, 50432}));  // as pad --model gpt2 proposes

  // Padded to 50264 (what pad recommends), the three GEMMs are those of the trace recorded with
  // vocab_size 50264, leading dimensions included; the rest is untouched.
  const Workload padded = with_dimension(w, 50257, 50264);
  const Workload recorded = real_trace("gpt2-vocab50264");
  ASSERT_EQ(padded.gemms.size(), recorded.gemms.size());
  std::map<std::string, int64_t> a, b;
  const auto key = [](const Problem& p) { return fmt::format("{} {} {} {}", gemm_string(p), p.lda, p.ldb, p.ldc); };
  for (const WorkloadGemm& g : padded.gemms) a[key(g.problems[0])] += g.count;
  for (const WorkloadGemm& g : recorded.gemms) b[key(g.problems[0])] += g.count;
  EXPECT_EQ(a, b);
  EXPECT_FALSE(padded.kernel_us());  // the times were those of the old shapes
  // The padded vocabulary's GEMMs take 3.78 ms of kernel time in the re-recorded step, against 22.63 ms.
  double before = 0, after = 0;
  for (const WorkloadGemm& g : w.gemms)
    if (g.problems[0].m == 50257 || g.problems[0].n == 50257 || g.problems[0].k == 50257) before += *g.kernel_us;
  for (const WorkloadGemm& g : recorded.gemms)
    if (g.problems[0].m == 50264 || g.problems[0].n == 50264 || g.problems[0].k == 50264) after += *g.kernel_us;
  EXPECT_NEAR(before, 22630.8, 0.5);
  EXPECT_LT(after, before / 3);
  // Why: cuBLAS ran 16-byte-unaligned 50257 on cutlass_75 align1 kernels, and 50264 on nvjet.
  for (const WorkloadGemm& g : w.gemms) {
    if (g.problems[0].n != 50257) continue;
    EXPECT_NE(g.kernel_names.at(0).find("cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_tn_align1"), std::string::npos);
  }
  for (const WorkloadGemm& g : recorded.gemms) {
    if (g.problems[0].n != 50264) continue;
    EXPECT_EQ(g.kernel_names.at(0).rfind("nvjet_sm90", 0), 0u) << g.kernel_names.at(0);
  }
}

WorkloadGemm one_call(const Problem& p, int64_t count, const std::string& origin, std::optional<double> us = {}) {
  WorkloadGemm g;
  g.problems = {p};
  g.count = count;
  g.origin = origin;
  g.kernel_us = us;
  return g;
}

TEST(WorkloadKnobs, PackedLeadingDimensionsFollowSlicesKeepTheirs) {
  Workload w;
  Problem sliced = packed_problem(4096, 768, 768, Layout::kNN, DType::kBf16);
  sliced.lda = 2304;  // q of a fused qkv: rows 2304 apart
  w.add(one_call(sliced, 2, "q"));
  w.add(one_call(packed_problem(4096, 768, 768, Layout::kNN, DType::kBf16), 3, "x"));
  w.add(one_call(packed_problem(768, 4096, 768, Layout::kTN, DType::kBf16), 1, "wgrad", 7.0));
  w.add(one_call(packed_problem(4100, 768, 768, Layout::kNN, DType::kBf16), 4, "y"));
  const Workload padded = with_dimension(w, 768, 776);
  ASSERT_EQ(padded.gemms.size(), 4u);
  EXPECT_EQ(gemm_string(padded.gemms[0].problems[0]), "4096x776x776 nn");
  EXPECT_EQ(padded.gemms[0].problems[0].lda, 2304);  // still a slice of the fused tensor
  EXPECT_EQ(padded.gemms[1].problems[0].lda, 776);   // packed: follows the new K
  EXPECT_EQ(padded.gemms[1].problems[0].ldc, 776);
  EXPECT_EQ(padded.gemms[2].problems[0].lda, 776);   // tn: A stored K x M, rows of M = 776
  EXPECT_FALSE(padded.gemms[2].kernel_us);           // times were those of the old shape
  // Padding past a slice's ld makes it packed (a row cannot be longer than the rows' distance).
  EXPECT_EQ(with_dimension(w, 768, 4000).gemms[0].problems[0].lda, 4000);
  // Calls that become identical merge.
  const Workload merged = with_dimension(w, 4100, 4096);
  ASSERT_EQ(merged.gemms.size(), 3u);
  EXPECT_EQ(merged.gemms[1].count, 7);
  EXPECT_EQ(merged.gemms[1].origin, "x+y");
}

TEST(TraceImportReal, Gpt2Vocab50264CallsMatchItsGemmKernels) {
  const Workload w = real_trace("gpt2-vocab50264");
  EXPECT_EQ(calls_per_shape(w),
            kernels_per_shape(std::string(SHAPESCOPE_TEST_DATA) + "/traces/gpt2-vocab50264.kernels.csv"));
}

}  // namespace
}  // namespace shapescope
