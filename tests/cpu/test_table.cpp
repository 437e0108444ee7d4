// Tables that fit: the one writer (report/table.hpp) narrows a table to $COLUMNS (120 when unset and
// not on a terminal) by shortening a kernel name, wrapping a sentence and dropping columns in each
// table's order, and --wide shows every column whole. Then every command's default table, run on
// the committed stores, at 120 and 80 columns.
#include "report/table.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "cli_util.hpp"

namespace shapescope {
namespace {

const std::string kData = SHAPESCOPE_TEST_DATA;

// $COLUMNS for one test, as it was afterwards.
class Columns {
 public:
  explicit Columns(const char* value) {
    if (const char* old = std::getenv("COLUMNS")) old_ = old;
    value ? setenv("COLUMNS", value, 1) : unsetenv("COLUMNS");
  }
  ~Columns() {
    old_.empty() ? unsetenv("COLUMNS") : setenv("COLUMNS", old_.c_str(), 1);
    set_wide_tables(false);
  }

 private:
  std::string old_;
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

size_t widest(const std::vector<std::string>& lines) {
  size_t w = 0;
  for (const std::string& l : lines) w = std::max(w, l.size());
  return w;
}

std::string table(const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right,
                  const std::vector<ColumnFit>& fit = {}, const std::string& indent = "") {
  std::ostringstream out;
  write_table(out, rows, right, indent, fit);
  return out.str();
}

const std::string kKernel = "cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1";

TEST(TableWidth, ColumnsOr120) {
  {
    const Columns c(nullptr);
    EXPECT_EQ(table_width(), 120u);  // the tests' stdout is no terminal
  }
  {
    const Columns c("77");
    EXPECT_EQ(table_width(), 77u);
  }
  for (const char* bad : {"", "0", "-5", "wide", "80x"}) {
    const Columns c(bad);
    EXPECT_EQ(table_width(), 120u) << bad;
  }
  const Columns c("40");
  set_wide_tables(true);
  EXPECT_GT(table_width(), 1u << 20);
}

TEST(WriteTable, ATableThatFitsIsAsItWas) {
  const Columns c("200");
  EXPECT_EQ(table({{"a", "bb", "kernel"}, {"10", "x", kKernel}}, {true, false, false}, {{1}, {0, 24}, {2}}),
            " a  bb  kernel\n"
            "10  x   " + kKernel + "\n");
}

// The kernel name is shortened first, then the columns go in their order (1 first).
TEST(WriteTable, ShortensThenDropsInOrder) {
  const std::vector<std::vector<std::string>> rows = {{"size", "clock [MHz]", "tiles", "kernel"},
                                                      {"1793", "1980", "15x8", kKernel}};
  const std::vector<ColumnFit> fit = {{}, {1}, {2}, {0, 24}};
  {
    const Columns c("70");  // 4 + 11 + 5 + 57 + 6 = 83: the kernel gives 13
    const std::vector<std::string> lines = lines_of(table(rows, {true, true, true, false}, fit));
    EXPECT_EQ(lines[1], "1793         1980   15x8  cutlass_75_tensorop_bf16...256x128_nn_align1");
    EXPECT_LE(widest(lines), 70u);
  }
  {
    const Columns c("40");  // at 24 the kernel is not enough: the clock goes, then the tiles
    const std::vector<std::string> lines = lines_of(table(rows, {true, true, true, false}, fit));
    EXPECT_EQ(lines[0], "size  tiles  kernel");
    EXPECT_EQ(lines[1], "1793   15x8  cutlass...256x128_nn_align1");
    EXPECT_LE(widest(lines), 40u);
  }
  {
    const Columns c("10");  // nothing more to drop: as narrow as it gets
    const std::vector<std::string> lines = lines_of(table(rows, {true, true, true, false}, fit));
    EXPECT_EQ(lines[0], "size  kernel");
    EXPECT_EQ(lines[1].size(), 4u + 2 + 24);
  }
  {
    const Columns c("10");
    set_wide_tables(true);
    EXPECT_EQ(lines_of(table(rows, {true, true, true, false}, fit))[1], "1793         1980   15x8  " + kKernel);
  }
}

// A sentence in the last column wraps under itself; no word is lost and no line is too wide.
TEST(WriteTable, ASentenceWrapsUnderItsColumn) {
  const Columns c("60");  // 13 for the first columns, 47 for the sentence
  const std::string verdict = "1793 is slow: unaligned sizes, 4.4x the time of 1792, whose rows are 16-byte aligned";
  const std::vector<std::string> lines =
      lines_of(table({{"#", "time", "verdict"}, {"1", "110.77", verdict}, {"2", "24.99", "ok"}}, {true, true, false}, {},
                     "  "));
  EXPECT_LE(widest(lines), 60u);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "  #    time  verdict");
  EXPECT_EQ(lines[1], "  1  110.77  1793 is slow: unaligned sizes, 4.4x the time of");
  EXPECT_EQ(lines[2], "             1792, whose rows are 16-byte aligned");
  EXPECT_EQ(lines[3], "  2   24.99  ok");
}

// A word longer than the column is cut where the line ends, never beyond the width.
TEST(WriteTable, AWordLongerThanTheColumnIsCut) {
  const Columns c("50");
  const std::vector<std::string> lines =
      lines_of(table({{"n", "why"}, {"1", "runs " + kKernel + " there"}}, {true, false}));
  EXPECT_LE(widest(lines), 50u);
  std::string joined;
  for (size_t i = 1; i < lines.size(); ++i) joined += lines[i].substr(3);
  EXPECT_NE(joined.find(kKernel), std::string::npos) << joined;
}

// A path keeps its end, where it differs from the others.
TEST(WriteTable, APathIsShortenedAtItsStart) {
  const Columns c("30");
  const std::vector<std::string> lines =
      lines_of(table({{"GPU", "store"}, {"H100", "bench/speed/results/h100-sweep/sweep.db"}}, {false, false},
                     {{}, {0, 20, 0, true}}));
  EXPECT_EQ(lines[1], "H100  ...s/h100-sweep/sweep.db");
}

// A last column of names (no blank in them) is not wrapped when the table says nothing.
TEST(WriteTable, NamesAreNotWrappedUnasked) {
  const Columns c("30");
  EXPECT_EQ(lines_of(table({{"n", "kernel"}, {"1", kKernel}}, {true, false}))[1], "1  " + kKernel);
}

TEST(ShortenMiddle, KeepsTheTileAndAlignment) {
  EXPECT_EQ(shorten_middle(kKernel, 48), "cutlass_75_tensorop_bf16_s16...256x128_nn_align1");
  EXPECT_EQ(shorten_middle(kKernel, 24), "cutl...256x128_nn_align1");
  EXPECT_EQ(shorten_middle(kKernel, 20), kKernel);  // no head left: whole
  EXPECT_EQ(shorten_middle("short", 24), "short");
}

// --- every command's default table, from the committed stores ---

// The lines of the table whose header starts with `header` (after any indent): it and the lines
// after it up to a blank line, less the notes some tables have under them (a line indented by two
// under a table that is not).
std::vector<std::string> table_lines(const std::string& out, const std::string& header) {
  const std::vector<std::string> all = lines_of(out);
  std::vector<std::string> rows;
  for (size_t i = 0; i < all.size(); ++i) {
    const size_t indent = all[i].find_first_not_of(' ');
    if (indent == std::string::npos || all[i].compare(indent, header.size(), header) != 0) continue;
    for (size_t j = i; j < all.size() && !all[j].empty(); ++j) {
      const bool note = indent < 2 && all[j].find_first_not_of(' ') == 2;
      if (!note) rows.push_back(all[j]);
    }
    break;
  }
  return rows;
}

TEST(EveryCommandsTable, FitsColumnsAndWideShowsEveryColumn) {
  const std::string sweep = kData + "/h200-2026-11-21/sweep_bf16_nn_1-4096.db";
  const std::string explain_h100 = kData + "/h100-2026-11-25-explain/explain.db";
  const std::string explain_h200 = kData + "/h200-2026-11-21-final/explain.db";
  const std::string pad = kData + "/h200-2026-11-21-final/pad.db";
  struct Case {
    std::string args;
    std::vector<std::string> headers;  // each table's first header cell
  };
  const std::vector<Case> cases = {
      {"export --db " + sweep + " --n 1791..1793,4095,4096 --format table", {"backend"}},
      {"explain 1793 --db " + explain_h100, {"control ", "size ", "1. "}},
      {"explain 1793 --db " + explain_h100 + " --db " + explain_h200, {"GPU "}},
      {"pad --model gpt2 --tokens 12288 --train --db " + pad, {"linear ", "dimension "}},
      {"pad --gemms " + kData + "/gemms/jax-step.json --dry-run --db " + pad, {"GEMM ", "size "}},
      {"profile --trace " + kData + "/traces/gpt2.json --db " + pad, {"#  GEMM"}},
  };
  for (const char* columns : {"120", "80"}) {
    for (const Case& c : cases) {
      const CliRun r = run_binary("COLUMNS=" + std::string(columns) + " " + kShapescopeBin, c.args);
      ASSERT_EQ(r.code, 0) << c.args << "\n" << r.err;
      for (const std::string& header : c.headers) {
        const std::vector<std::string> rows = table_lines(r.out, header);
        ASSERT_GT(rows.size(), 1u) << c.args << ": no table '" << header << "' in\n" << r.out;
        // 80 columns leaves some tables a little wider than that once every column that may go has
        // gone (their keys and a shortened kernel name stay): never more than 100.
        EXPECT_LE(widest(rows), std::string(columns) == "120" ? 120u : 100u) << c.args << " at " << columns << "\n"
                                                                             << rows[0] << "\n" << rows[1];
      }
    }
  }
  // --wide: the table as wide as its cells, every column there and every kernel name whole.
  const CliRun wide = run_binary(std::string("COLUMNS=80 ") + kShapescopeBin, "export --db " + sweep + " --n 1793 --format table --wide");
  ASSERT_EQ(wide.code, 0) << wide.err;
  EXPECT_NE(wide.out.find("clock [MHz]"), std::string::npos) << wide.out;
  EXPECT_NE(wide.out.find("cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1"), std::string::npos) << wide.out;
  const CliRun fitted = run_binary(std::string("COLUMNS=80 ") + kShapescopeBin, "export --db " + sweep + " --n 1793 --format table");
  EXPECT_EQ(fitted.out.find("clock [MHz]"), std::string::npos) << fitted.out;
  // CSV and JSON are never fitted.
  const CliRun csv = run_binary(std::string("COLUMNS=40 ") + kShapescopeBin, "export --db " + sweep + " --n 1793 --format csv");
  EXPECT_NE(csv.out.find("cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1"), std::string::npos);
  for (const std::string& args : {"explain 1793 --json --wide --db " + sweep, std::string("profile --json --wide --gemms x.csv")}) {
    const CliRun r = run(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(r.err, "shapescope: --wide: only for --format table (--format json carries every field whole)\n") << args;
  }
}

}  // namespace
}  // namespace shapescope
