// Workloads from GEMM lists (CSV and JSON): the committed examples, groups, merging, and every
// kind of bad input as one line naming the line (entry) and the column.
#include <gtest/gtest.h>

#include <string>

#include "common/error.hpp"
#include "model/gemm_list.hpp"
#include "model/pad.hpp"
#include "model_util.hpp"

namespace shapescope {
namespace {

std::string data(const std::string& name) { return std::string(SHAPESCOPE_TEST_DATA) + "/gemms/" + name; }

TEST(GemmList, MegatronCsvWithAGroupAndLeadingDimensions) {
  const Workload w = load_gemm_list(data("megatron-moe.csv"), "--gemms: 'megatron-moe.csv'");
  ASSERT_EQ(w.gemms.size(), 5u);
  EXPECT_EQ(gemm_string(w.gemms[0].problems[0]), "4096x3072x4096 nt");
  EXPECT_EQ(w.gemms[0].count, 64);  // the repeated row merged
  EXPECT_EQ(w.gemms[0].origin, "linear_qkv fwd+linear_qkv fwd (again: merges)");
  EXPECT_EQ(w.gemms[0].problems[0].lda, 4096);  // packed when not given
  EXPECT_EQ(w.gemms[0].problems[0].ldb, 4096);
  EXPECT_EQ(w.gemms[0].problems[0].ldc, 3072);
  const WorkloadGemm& fc1 = w.gemms[3];
  ASSERT_EQ(fc1.problems.size(), 4u);  // one grouped call, one problem per row, in row order
  EXPECT_EQ(fc1.count, 32);
  EXPECT_EQ(fc1.problems[0].m, 1100);
  EXPECT_EQ(fc1.problems[2].m, 996);
  EXPECT_EQ(fc1.origin, "experts fc1 fwd, expert 0+experts fc1 fwd, expert 1+experts fc1 fwd, expert 2+experts fc1 fwd, expert 3");
  EXPECT_EQ(fc1.shape_text(), "grouped 4 x 996..1100x7168x4096 nt");
  const Problem& padded = w.gemms[4].problems[0];
  EXPECT_EQ(padded.dtype, DType::kFp32);
  EXPECT_EQ(padded.batch, 8);
  EXPECT_EQ(padded.lda, 72);
  EXPECT_EQ(padded.off_a, 8);
  EXPECT_EQ(w.calls(), 64 + 32 + 32 + 32 + 3);
}

TEST(GemmList, JaxJson) {
  const Workload w = load_gemm_list(data("jax-step.json"), "--gemms: 'jax-step.json'");
  ASSERT_EQ(w.gemms.size(), 3u);
  EXPECT_EQ(gemm_string(w.gemms[0].problems[0]), "8192x50304x768 nt");
  EXPECT_EQ(w.gemms[2].problems[0].batch, 96);
  EXPECT_EQ(w.gemms[2].origin, "scores");
  // {"gemms": [...]} is read the same.
  const Workload wrapped = parse_gemm_list(
      R"({"gemms": [{"m": 8, "n": 8, "k": 8, "layout": "TT", "dtype": "FP16", "batch": 1, "count": 2}]})", "x");
  EXPECT_EQ(wrapped.gemms[0].problems[0].layout, Layout::kTT);
  EXPECT_EQ(wrapped.gemms[0].problems[0].dtype, DType::kFp16);
  // A spreadsheet's export: byte order mark, CRLF line ends, spaces around the values.
  const Workload csv = parse_gemm_list("\xEF\xBB\xBFM, N, K, Layout, DType, Batch, Count\r\n 8, 16, 32 , nt, bf16, 1, 5\r\n", "x");
  ASSERT_EQ(csv.gemms.size(), 1u);
  EXPECT_EQ(gemm_string(csv.gemms[0].problems[0]), "8x16x32 nt");
  EXPECT_EQ(csv.gemms[0].count, 5);
  // A quoted name may hold a comma, a doubled quote and a line break (RFC 4180).
  const Workload quoted =
      parse_gemm_list("m,n,k,layout,dtype,batch,count,name\n8,8,8,nn,bf16,1,1,\"a, \"\"b\"\"\nc\"\n", "x");
  ASSERT_EQ(quoted.gemms.size(), 1u);
  EXPECT_EQ(quoted.gemms[0].origin, "a, \"b\"\nc");
}

void expect_error(const std::string& text, const std::string& words) {
  expect_usage_error([&] { parse_gemm_list(text, "--gemms: 'g'"); }, "--gemms: 'g'", words);
}

TEST(GemmList, BadListsAreOneLineNamingTheRowAndColumn) {
  const std::string header = "m,n,k,layout,dtype,batch,count\n";
  expect_error("", "is empty");
  expect_error("# only a comment\n", "is empty (a CSV GEMM list starts with a header");
  expect_error(header, "lists no GEMM");
  expect_error("m,n,k,layout,dtype,batch\n1,1,1,nn,bf16,1\n", "line 1: no column 'count'");
  expect_error("m,n,k,layout,dtype,batch,count,flops\n", "line 1: unknown column 'flops'");
  expect_error("m,n,k,layout,dtype,batch,count,m\n", "line 1: column 'm' is given twice");
  expect_error(header + "64,64,64,nn,bf16,1\n", "line 2: 6 values for 7 columns");
  expect_error(header + "64,,64,nn,bf16,1,1\n", "line 2, column 'n': no value (it is required)");
  expect_error(header + "\n# a comment\n64,64,0,nn,bf16,1,1\n", "line 4, column 'k': 0 is out of range (an integer from 1 to 2147483647)");
  expect_error(header + "64,-8,64,nn,bf16,1,1\n", "column 'n': -8 is out of range");
  expect_error(header + "64,64,2147483648,nn,bf16,1,1\n", "column 'k': 2147483648 is out of range");
  expect_error(header + "64,64,99999999999999999999,nn,bf16,1,1\n", "column 'k': 99999999999999999999 is out of range");
  expect_error(header + "64,abc,64,nn,bf16,1,1\n", "column 'n': 'abc' is not an integer");
  expect_error(header + "64,64.5,64,nn,bf16,1,1\n", "column 'n': '64.5' is not an integer");
  expect_error(header + "64,64,64,nx,bf16,1,1\n", "column 'layout': 'nx' is not nn, nt, tn or tt");
  expect_error(header + "64,64,64,nn,int8,1,1\n", "column 'dtype': 'int8' is not bf16, fp16, fp32, tf32 or fp8");
  expect_error(header + "64,64,64,nn,bf16,1,0\n", "column 'count': 0 is out of range");
  expect_error(header + "64,64,64,nn,bf16,1,\"1\n", "line 2: a quote is not closed");
  // A row that spans two lines (a quoted line break): the next row is counted on the line it starts.
  expect_error("m,n,k,layout,dtype,batch,count,name\n8,8,8,nn,bf16,1,1,\"a\nb\"\n8,8,0,nn,bf16,1,1,c\n",
               "line 4, column 'k': 0 is out of range");
  expect_error("m,n,k,layout,dtype,batch,count,lda\n64,64,32,tn,bf16,1,1,32\n",
               "column 'lda': 32 is less than A's stored row length 64 (tn layout: A is stored K x M)");
  expect_error("m,n,k,layout,dtype,batch,count,ldc\n64,64,32,nn,bf16,1,1,63\n", "column 'ldc': 63 is less than N = 64");
  expect_error("m,n,k,layout,dtype,batch,count,offset_a\n64,64,32,nn,bf16,1,1,-1\n", "column 'offset_a': -1 is out of range (an integer from 0");
  expect_error("m,n,k,layout,dtype,batch,count,group\n64,64,32,nn,bf16,1,1,a\n64,64,32,nn,bf16,1,2,a\n",
               "line 3, column 'count': 2 differs from the 1 of group 'a'");
  expect_error("m,n,k,layout,dtype,batch,count,group\n64,64,32,nn,bf16,1,1,a\n64,64,32,nt,bf16,1,1,a\n",
               "line 3: group 'a' mixes dtypes or layouts");
  // JSON: malformed, truncated, not a list, wrong types.
  expect_error("[{\"m\": 1,", "is not valid JSON");
  expect_error("{\"m\": 1}", "a JSON GEMM list is an array of objects");
  expect_error("[]", "lists no GEMM");
  expect_error("[42]", "entry 1 is 42, not an object");
  expect_error(R"([{"m": 8, "n": 8, "k": 8, "layout": "nn", "dtype": "bf16", "batch": 1, "count": 1, "flops": 3}])",
               "entry 1: unknown key 'flops'");
  expect_error(R"([{"m": 8, "n": 8, "k": 8.0, "layout": "nn", "dtype": "bf16", "batch": 1, "count": 1}])",
               "entry 1, column 'k': '8.0' is not an integer");
  expect_error(R"([{"m": 8, "n": 8, "k": 8, "layout": "nn", "dtype": "bf16", "batch": 1}])",
               "entry 1, column 'count': no value (it is required)");
  expect_error(R"([{"m": 8, "n": 8, "k": 8, "layout": "nn", "dtype": "bf16", "batch": 1, "count": true}])",
               "column 'count': 'true' is not an integer");
}

}  // namespace
}  // namespace shapescope
