// Several explanations measured together (explain_many, profile's verdicts): a point measure()
// skips is told to the job whose problem it was, found by the problem itself, so that another job
// of the same sizes and dtype in another form (its rows padded) does not report it as its own.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/variants.hpp"
#include "gpu_test_util.hpp"
#include "measure/measure.hpp"
#include "shape/plan.hpp"
#include "store/store.hpp"
#include "views/explain.hpp"

namespace shapescope {
namespace {

// 04_mma_pipelined loads rows in 16-byte chunks: a leading dimension of 1001 bf16 elements is
// refused, 1024 is taken.
constexpr const char* kRowsRefused = "multiples of 8 elements";

ExplainJob job_1001(const std::string& db, std::optional<int64_t> ld) {
  ExplainJob job;
  ExplainRequest& o = job.request;
  o.shape = ShapeArg{1001, 1001, 1001, true};
  o.shape_text = "1001";
  o.form.lda = ld;
  o.form.ldb = ld;
  o.form.ldc = ld;
  o.backend = parse_backend_spec("custom:04_mma_pipelined:128x128:dp");
  o.measure.samples = 3;
  o.measure.warmup_ms = 0;
  o.controls = false;
  o.precision = false;
  o.pair_seconds = 0;
  o.db = db;
  job.target = form_problem(o.form, 1001, 1001, 1001);
  return job;
}

TEST(ExplainMany, ASkippedPointGoesToTheJobWhoseProblemItIs) {
  SKIP_WITHOUT_GPU();
  const DeviceContext device = query_device(0);
  testing::TempStore temp("explain_many");
  Store store(temp.path.string());
  const ExplainJob packed = job_1001(temp.path.string(), std::nullopt);
  const ExplainJob padded = job_1001(temp.path.string(), 1024);

  // measure() names the skipped point's problem beside its line.
  MeasureRequest request;
  request.problems = {packed.target};
  request.backends = {packed.request.backend};
  request.measure = packed.request.measure;
  const MeasureOutcome outcome = measure(request, device, store, {}, nullptr);
  ASSERT_EQ(outcome.skipped.size(), 1u);
  ASSERT_EQ(outcome.skips.size(), 1u);
  EXPECT_TRUE(outcome.skips[0].problem == packed.target);
  EXPECT_NE(outcome.skipped[0].find(kRowsRefused), std::string::npos) << outcome.skipped[0];

  const std::vector<ExplainJobResult> got = explain_many({packed, padded}, device, store, nullptr);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_FALSE(got[0].report);
  EXPECT_NE(got[0].why_none.find(kRowsRefused), std::string::npos) << got[0].why_none;
  ASSERT_TRUE(got[1].report) << got[1].why_none;
  for (const NotMeasured& m : got[1].report->missing)
    EXPECT_EQ(m.why.find(kRowsRefused), std::string::npos) << "the packed job's skip in the padded one's: " << m.what;
}

}  // namespace
}  // namespace shapescope
