// profile's what-ifs from recorded explanations and measurements: the candidates a profile's entries
// give (explain's fastest fix of each kind, what it runs, what it adds), the step with candidates
// applied, a saving per step from the changed step's paired ratio and its interval, the two lists
// (same dtype, precision) and their numbering, and what is left out.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <sstream>

#include "report/profile_html.hpp"
#include "report/what_if_text.hpp"
#include "report/profile_report.hpp"
#include "core/fp8.hpp"
#include "views/explain_precision.hpp"
#include "views/profile.hpp"
#include "views/what_ifs.hpp"

namespace shapescope {
namespace {

ExplainPoint point(Role role, double us) {
  ExplainPoint p;
  p.role = role;
  p.time_us = us;
  return p;
}

StoredPoint stored(const Problem& p, BackendKind backend, const std::string& algo) {
  StoredPoint s;
  s.key.problem = p;
  s.key.backend = backend;
  s.key.algo = algo;
  return s;
}

PairedRatio ratio(double low, double median, double high) {
  PairedRatio r;
  r.low = low, r.median = median, r.high = high, r.pairs = 16;
  return r;
}

Problem square(int64_t n, DType dtype = DType::kBf16) { return packed_problem(n, n, n, Layout::kNN, dtype); }

// One GEMM of `calls` per step at `row_us`, explained with a target at `target_us` and these fixes,
// each (kind, its point's problem, backend, algo, time).
struct FixSpec {
  FixKind kind;
  Problem problem;
  BackendKind backend;
  std::string algo;
  double us;
  bool copy = false;
};
ProfileEntry entry(double calls, double row_us, const Problem& target, double target_us, const std::vector<FixSpec>& fixes) {
  ProfileEntry e;
  e.row.problem = target;
  e.row.calls_per_step = calls;
  e.row.time = GemmTime{row_us, 0.01};
  ExplainReport x;
  x.points = {point(Role::kTarget, target_us)};
  x.stored = {stored(target, BackendKind::kCublas, "default")};
  for (const FixSpec& f : fixes) {
    x.points.push_back(point(Role::kNeighbour, f.us));
    x.stored.push_back(stored(f.problem, f.backend, f.algo));
    Fix fix;
    fix.kind = f.kind;
    fix.point = x.points.size() - 1;
    fix.time_us = f.us;
    if (f.copy) {
      x.points.push_back(point(Role::kCopy, 20));
      x.stored.push_back(stored(target, BackendKind::kCopy, "copy"));
      fix.copy = x.points.size() - 1;
    }
    x.explanation.fixes.push_back(fix);
  }
  e.explanation = x;
  return e;
}

// A measured step of `gemms` GEMMs, each a quarter of its 10 ms GEMM time (10 calls of 250 us).
ProfileResult quarters_step(int gemms) {
  ProfileResult r;
  r.measured = MeasurementSummary{};
  r.totals.measured_us = 10000;
  for (int i = 0; i < gemms; ++i) {
    r.entries.push_back(entry(10, 250, square(1024 + i), 250, {}));
    r.entries.back().row.step_us = 2500;
  }
  return r;
}

// A candidate of `kind` for an entry, its paired ratio to the step (none: not measured).
WhatIfCandidate paired_candidate(WhatIfKind kind, size_t entry, std::optional<PairedRatio> ratio) {
  WhatIfCandidate c;
  c.kind = kind;
  c.entry = entry;
  c.fix = 0;
  c.per_call = {StepTerm(square(2048), BackendKind::kCublas, 10)};
  c.ratio = ratio;
  return c;
}

TEST(WhatIfs, TheCandidatesAreEachKindsFastestFixAsTheCallsItRuns) {
  ProfileResult r;
  const Problem target = square(1793);
  r.entries.push_back(entry(10, 500, target, 500,
                            {{FixKind::kPadUp, square(1800), BackendKind::kCublas, "default", 400},
                             {FixKind::kPadUp, square(1856), BackendKind::kCublas, "default", 300},  // the faster padding
                             {FixKind::kAlgorithm, target, BackendKind::kCublasLt, "h3", 450},
                             {FixKind::kAlignLayout, aligned_layout(target, 16), BackendKind::kCublas, "default", 420, true},
                             {FixKind::kPadUp, square(1808), BackendKind::kCublas, "default", 510}}));  // slower: none
  const std::vector<WhatIfCandidate> c = what_if_candidates(r);
  ASSERT_EQ(c.size(), 3u);
  // In kind order: padding, layout, algorithm.
  EXPECT_EQ(c[0].kind, WhatIfKind::kPadding);
  EXPECT_EQ(*c[0].fix, 1u);
  ASSERT_EQ(c[0].per_call.size(), 1u);
  EXPECT_EQ(c[0].per_call[0].problem, square(1856));
  EXPECT_DOUBLE_EQ(c[0].per_call[0].count, 10);
  EXPECT_EQ(c[1].kind, WhatIfKind::kLayout);
  ASSERT_EQ(c[1].per_call.size(), 2u) << "a layout change at run time is priced with its copy";
  EXPECT_EQ(c[1].per_call[1].backend, BackendKind::kCopy);
  EXPECT_EQ(c[2].kind, WhatIfKind::kAlgorithm);
  EXPECT_EQ(c[2].per_call[0].backend, BackendKind::kCublasLt);
  EXPECT_EQ(c[2].per_call[0].lt_rank, 3);
  EXPECT_EQ(c[2].per_call[0].algo(), "h3");
  // Batching: the same work in fewer, larger calls.
  ProfileResult batched;
  batched.entries.push_back(entry(4, 15, packed_problem(60, 2048, 2048, Layout::kTN, DType::kBf16), 15,
                                  {{FixKind::kBatchMore, packed_problem(240, 2048, 2048, Layout::kTN, DType::kBf16),
                                    BackendKind::kCublas, "default", 11}}));
  const std::vector<WhatIfCandidate> b = what_if_candidates(batched);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].kind, WhatIfKind::kBatching);
  EXPECT_DOUBLE_EQ(b[0].per_call[0].count, 1) << "4 calls of 60 rows: 1 call of 240";
  // A grouped call's explanation is of one group: no fix of it is a change to the call.
  ProfileResult grouped;
  grouped.entries.push_back(entry(4, 300, square(137), 10, {{FixKind::kPadUp, square(144), BackendKind::kCublas, "default", 8}}));
  grouped.entries[0].row.problem = grouped_problem({square(137), square(137)});
  EXPECT_TRUE(what_if_candidates(grouped).empty());
  // The step with the padding applied: the GEMM's term replaced, the others kept.
  r.entries.push_back(entry(4, 100, square(1024), 100, {}));
  r.candidates = c;
  const StepCalls before = step_terms(r), after = changed_terms_of(r, {1});
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(before[0].problem, target);
  ASSERT_EQ(after.size(), 3u);
  EXPECT_EQ(after[0].problem, aligned_layout(target, 16));
  EXPECT_EQ(after[1].backend, BackendKind::kCopy);
  EXPECT_EQ(after[2].problem, square(1024));
}

// A Linear layer's input gradient (nn) and weight gradient (tn) in a step: explain's fp8 controls of
// them (views/explain_precision.hpp: the nt form and its casts), timed, give a precision what-if that
// runs the nt fp8 GEMM at every call with its per-call casts (the gradient's; tn: the activation's
// too), and the weight's cast once per step; each operand stored K x rows transposed by its cast.
TEST(WhatIfs, TheGradientsGetAPrecisionWhatIfOfTheirNtFormWithItsCasts) {
  for (Layout layout : {Layout::kNN, Layout::kTN}) {
    const Problem target = packed_problem(4096, 4096, 4096, layout, DType::kBf16);
    ExplainRequest o;
    o.backend = BackendSpec(BackendKind::kCublas);
    const PrecisionControls controls = precision_controls(o, target, 90);
    ASSERT_EQ(controls.problems.size(), 3u);
    ProfileEntry e = entry(6, 400, target, 400, {});
    ExplainReport& x = *e.explanation;
    x.points.front().candidate.problem = target;
    for (size_t i = 0; i < controls.problems.size(); ++i) {
      x.points.push_back(point(Role::kPrecision, 250 - 10.0 * double(i)));  // block the fastest
      x.points.back().candidate.problem = controls.problems[i];
      x.stored.push_back(stored(controls.problems[i], BackendKind::kCublasLt, "h0"));
    }
    for (const CastControl& c : controls.casts) {
      x.points.push_back(point(Role::kCast, c.per_call ? 20 : 30));
      x.points.back().candidate.problem = c.problem;
      x.points.back().of = 1 + *c.precision;
      x.points.back().per_call = c.per_call;
      x.stored.push_back(stored(c.problem, BackendKind::kCast, "default"));
    }
    for (ExplainPoint& p : x.points) {
      p.annotation.roofline.flops = p.candidate.problem.flops();
      p.annotation.roofline.tflops = p.annotation.roofline.flops / *p.time_us / 1e6;
    }
    x.explanation = explain(x.points);
    ProfileResult r;
    r.entries.push_back(e);
    const std::vector<WhatIfCandidate> got = what_if_candidates(r);
    ASSERT_EQ(got.size(), 1u) << to_string(layout);
    const WhatIfCandidate& c = got.front();
    EXPECT_EQ(c.kind, WhatIfKind::kPrecision);
    ASSERT_FALSE(c.per_call.empty());
    const StepTerm& gemm = c.per_call.front();
    EXPECT_EQ(gemm.problem, controls.problems[2]) << "the fastest recipe, block";
    EXPECT_EQ(gemm.problem.layout, Layout::kNT);
    EXPECT_EQ(gemm.backend, BackendKind::kCublasLt);
    EXPECT_DOUBLE_EQ(gemm.count, 6);
    size_t transposed = 0;
    for (const StepTerm& t : c.per_call) transposed += t.backend == BackendKind::kCast && cast_transposes(t.problem);
    for (const StepTerm& t : c.per_step) transposed += cast_transposes(t.problem);
    // nn: the weight B stored K x N; tn: the gradient A stored K x M and the activation B stored K x N.
    EXPECT_EQ(transposed, layout == Layout::kNN ? 1u : 2u);
    if (layout == Layout::kNN) {
      // The gradient A cast at every call; the weight B transposed once per step.
      ASSERT_EQ(c.per_call.size(), 2u);
      EXPECT_EQ(c.per_call[1].problem.cast, CastOperand::kA);
      EXPECT_DOUBLE_EQ(c.per_call[1].count, 6);
      ASSERT_EQ(c.per_step.size(), 1u);
      EXPECT_EQ(c.per_step[0].problem.cast, CastOperand::kB);
      EXPECT_TRUE(cast_transposes(c.per_step[0].problem));
      // Each call's weight is cast once per step: by default every call is its own weight (one
      // micro-batch); with gradient accumulation over 3 micro-batches the 6 calls are 2 weights.
      EXPECT_DOUBLE_EQ(c.per_step[0].count, 6);
      ProfileResult accumulated = r;
      accumulated.request.micro_batches = 3;
      const std::vector<WhatIfCandidate> fewer = what_if_candidates(accumulated);
      ASSERT_EQ(fewer.size(), 1u);
      ASSERT_EQ(fewer[0].per_step.size(), 1u);
      EXPECT_DOUBLE_EQ(fewer[0].per_step[0].count, 2);
      EXPECT_DOUBLE_EQ(fewer[0].per_call[1].count, 6) << "the gradient is cast at every call still";
    } else {
      // Both operands are cast, and transposed, every call.
      ASSERT_EQ(c.per_call.size(), 3u);
      EXPECT_TRUE(c.per_step.empty());
      EXPECT_EQ(c.per_call[1].problem.cast, CastOperand::kA);
      EXPECT_EQ(c.per_call[2].problem.cast, CastOperand::kB);
      EXPECT_DOUBLE_EQ(c.per_call[2].count, 6);
    }
    // The changed step runs them in place of the GEMM.
    r.candidates = got;
    EXPECT_EQ(changed_terms_of(r, {0}).size(), c.per_call.size() + c.per_step.size());
  }
}

TEST(WhatIfs, ASavingIsTheStepsShareThePairedRatioGivesWithItsInterval) {
  ProfileResult r = quarters_step(4);
  r.candidates = {paired_candidate(WhatIfKind::kPadding, 0, ratio(0.89, 0.9, 0.91)),
                  paired_candidate(WhatIfKind::kPrecision, 1, ratio(0.7, 0.75, 0.8)),
                  // 0.4 % of the step, which is 1.6 % of its GEMM (0.8..2.4 %): straddles 2 %, no claim.
                  paired_candidate(WhatIfKind::kAlgorithm, 2, ratio(0.994, 0.996, 0.998)),
                  paired_candidate(WhatIfKind::kLayout, 3, std::nullopt),                // not measured: no claim
                  paired_candidate(WhatIfKind::kAlgorithm, 3, ratio(0.94, 0.95, 0.96))};
  ChangedStep all;
  all.name = kEverySameDtypeChange;
  r.changed_steps = {all};
  const WhatIfs w = what_ifs(r);
  ASSERT_EQ(w.same_dtype.ranked.size(), 2u);
  EXPECT_NEAR(w.same_dtype.ranked[0].saving_us, 1000, 1e-9);
  EXPECT_NEAR(*w.same_dtype.ranked[0].saving_low_us, 900, 1e-9);
  EXPECT_NEAR(*w.same_dtype.ranked[0].saving_high_us, 1100, 1e-9);
  EXPECT_NEAR(w.same_dtype.ranked[0].after_us, 250 - 1000.0 / 10, 1e-9);
  EXPECT_EQ(w.same_dtype.ranked[1].entry, 3u);
  ASSERT_EQ(w.precision.ranked.size(), 1u) << "precision changes are ranked apart";
  EXPECT_NEAR(w.precision.ranked[0].saving_us, 2500, 1e-9);
  // Numbered by candidate, not by rank: the numbers a listing shows name the same changes in another
  // run, where a saving near the least effect (candidate 3's) may be listed or not.
  EXPECT_EQ(w.same_dtype.ranked[0].number, 1u);
  EXPECT_EQ(w.same_dtype.ranked[1].number, 5u);
  EXPECT_EQ(w.precision.ranked[0].number, 2u);
  EXPECT_EQ(w.same_dtype.all, std::optional<size_t>(0));
  EXPECT_FALSE(w.precision.all);
  // The step's ratio as the changed GEMM's: a quarter of the step, 10 % of it saved is 40 % of the GEMM.
  const PairedRatio g = gemm_ratio(ratio(0.89, 0.9, 0.91), 0.25);
  EXPECT_NEAR(g.median, 0.6, 1e-12);
  EXPECT_NEAR(g.low, 0.56, 1e-12);
  EXPECT_NEAR(g.high, 0.64, 1e-12);
}

TEST(WhatIfs, AGroupedCallSlowerThanItsLoopIsAnUnpairedWhatIf) {
  ProfileResult r;
  r.measured = MeasurementSummary{};
  r.totals.measured_us = 5000;
  ProfileEntry e;
  e.row.calls_per_step = 2;
  e.row.time = GemmTime{300, 0.01};  // the faster way, as profile takes it
  e.row.step_us = 600;
  e.grouped_us = 660;
  e.loop_us = 300;
  r.entries.push_back(e);
  ProfileEntry close = e;
  close.grouped_us = 301;  // within 2 %: nothing to change
  r.entries.push_back(close);
  ProfileEntry ours = e;
  ours.custom_us = 290;  // our grouped kernel beats the loop: the grouped call stays
  ours.row.time = GemmTime{290, 0.01};
  r.entries.push_back(ours);
  r.candidates = what_if_candidates(r);
  ASSERT_EQ(r.candidates.size(), 1u);
  EXPECT_TRUE(r.candidates[0].per_call.empty()) << "not paired: the loop is not one call";
  const WhatIfs w = what_ifs(r);
  ASSERT_EQ(w.same_dtype.ranked.size(), 1u);
  EXPECT_EQ(w.same_dtype.ranked[0].kind, WhatIfKind::kGrouping);
  EXPECT_NEAR(w.same_dtype.ranked[0].saving_us, 2 * 300 * (1 - 300.0 / 660), 1e-9);
  EXPECT_FALSE(w.same_dtype.ranked[0].paired());
  EXPECT_EQ(w.not_paired, 1u);
  EXPECT_EQ(what_if_name(WhatIfKind::kGrouping), "grouping");
}

// A measured profile of one GEMM with a padding what-if and its changes at once measured as a step.
ProfileResult measured_with_a_what_if() {
  ProfileResult r;
  r.measured = MeasurementSummary{};
  r.totals.measured_us = 10000;
  const Problem target = square(1793);
  r.entries.push_back(entry(10, 500, target, 480, {{FixKind::kPadUp, square(1800), BackendKind::kCublas, "default", 384}}));
  r.entries.back().row.step_us = 5000;
  r.entries.back().explanation->points[1].label = "1800";
  r.workload.gemms.resize(1);  // the row's GEMM (its origin)
  r.candidates = what_if_candidates(r);
  EXPECT_EQ(r.candidates.size(), 1u);
  if (r.candidates.empty()) return r;
  r.candidates[0].ratio = ratio(0.78, 0.8, 0.82);
  ChangedStep all;
  all.name = kEverySameDtypeChange;
  all.candidates = {0};
  all.ratio = ratio(0.79, 0.8, 0.81);
  all.before_us = 10000;
  all.after_us = 8000;
  all.replayed = true;
  r.changed_steps = {all};
  return r;
}

// A changed step that makes the step slower costs, in ms from 10 ms up; a named one whose saving the
// replay could not pin down within 5 % before its time limit says so.
TEST(WhatIfs, AChangedStepSaysWhatItCostsAndWhetherItsSavingIsKnown) {
  ProfileResult r = measured_with_a_what_if();
  ASSERT_EQ(r.changed_steps.size(), 1u);
  ChangedStep slower = r.changed_steps[0];
  slower.before_us = 200000;
  slower.ratio = ratio(1.03, 1.05, 1.07);
  slower.after_us = 210000;
  EXPECT_NE(changed_step_line(r, slower).find("x1.050 [95 %: 1.030..1.070, 16 pairs]: costs 10.00 ms per step "
                                              "[6000.0 us to 14.00 ms]"),
            std::string::npos)
      << changed_step_line(r, slower);
  ChangedStep named = r.changed_steps[0];
  named.named = true;
  named.ratio = ratio(0.93, 0.944, 0.95);  // a 5.6 % move known to +-0.7 % of the step: +-12 % of itself
  named.after_us = 9440;
  const std::string line = changed_step_line(r, named);
  EXPECT_NE(line.find("saves 560.0 us per step [500.0 us to 700.0 us]; --what-if-seconds ended the passes before "
                      "it was known within +-5 %"),
            std::string::npos)
      << line;
  named.ratio = ratio(0.942, 0.944, 0.946);  // known to +-0.2 %: within 5 % of 5.6 %
  EXPECT_EQ(changed_step_line(r, named).find("ended the passes"), std::string::npos);
  // Three pairs: the interval is their least and largest, printed at its coverage, not as 95 %, and at
  // 75 % the saving is not known (the time limit ended the passes).
  named.ratio->pairs = 3, named.ratio->coverage = 0.75;
  EXPECT_NE(changed_step_line(r, named).find("x0.944 [75 %: 0.942..0.946, 3 pairs]"), std::string::npos)
      << changed_step_line(r, named);
  EXPECT_NE(changed_step_line(r, named).find("ended the passes"), std::string::npos) << changed_step_line(r, named);
  // Two pairs make no interval: none is printed, in the ratio or in the saving.
  named.ratio->pairs = 2, named.ratio->coverage = 0.5;
  EXPECT_NE(changed_step_line(r, named).find("x0.944 [no interval, 2 pairs]: saves 560.0 us per step; --what-if"),
            std::string::npos)
      << changed_step_line(r, named);
  // A named step paired, not replayed, had no --what-if-seconds to run out of.
  named.replayed = false;
  EXPECT_EQ(changed_step_line(r, named).find("ended the passes"), std::string::npos) << changed_step_line(r, named);
}

// The page (profile --html) and the text put the lists first and after the total, each with its
// changes at once measured as a step.
TEST(WhatIfs, ThePageAndTheTextShowThem) {
  const ProfileResult r = measured_with_a_what_if();
  std::ostringstream page, text;
  write_profile_html(page, r, ProfileHtmlOptions{});
  const std::string html = page.str();
  const size_t what_ifs = html.find("<h2 id=\"what-ifs\">"), gemms = html.find("<h2 id=\"gemms\">");
  ASSERT_NE(what_ifs, std::string::npos);
  EXPECT_LT(what_ifs, gemms) << "the what-ifs come first";
  EXPECT_NE(html.find("1793x1793x1793"), std::string::npos);
  EXPECT_NE(html.find("padding"), std::string::npos);
  write_profile_text(text, r);
  const std::string t = text.str();
  EXPECT_NE(t.find("what would make this step faster, each GEMM in its own dtype"), std::string::npos) << t;
  EXPECT_NE(t.find("every same-dtype change at once (1 change), measured as a step (replayed against the step in the "
                   "same passes, at the step's clock): the step's GEMM time 10.00 ms -> 8000.0 us"),
            std::string::npos)
      << t;
  // The move per step, with the ratio's interval on the step's time.
  EXPECT_NE(t.find("x0.800 [95 %: 0.790..0.810, 16 pairs]: saves 2000.0 us per step [1900.0 us to 2100.0 us]"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("in another precision"), std::string::npos) << "no precision list without a precision what-if";
  ProfileResult from_store = r;
  from_store.measured.reset();  // from a store: nothing was paired, no what-ifs
  from_store.stored = StoredSource{};
  std::ostringstream none;
  write_profile_html(none, from_store, ProfileHtmlOptions{});
  EXPECT_EQ(none.str().find("what-ifs"), std::string::npos);
}

// Only a GPU run writes the what-ifs and the fp8 casts into profile's JSON: written here, they pass
// the JSON tables' check (report/json_records.cpp) as the Python package's fields expect them.
TEST(WhatIfs, TheJsonOfAMeasuredProfileFitsItsTable) {
  ProfileResult r = measured_with_a_what_if();
  r.fp8_casts = ProfileResult::Fp8Casts{};
  r.fp8_casts->us_per_step = 120;
  r.fp8_casts->casts = 4;
  r.fp8_casts->measured = 4;
  r.changed_steps[0].ratio = ratio(0.795, 0.8, 0.805);
  std::ostringstream json;
  ASSERT_NO_THROW(write_profile_json(json, r));
  for (const char* key : {"\"what_ifs\": {", "\"changed_steps\": [", "\"median\": 0.8", "\"fp8_casts\": {", "\"text\": "})
    EXPECT_NE(json.str().find(key), std::string::npos) << key << " missing from\n" << json.str();
  // The changed step (x0.800 [0.795, 0.805]: a 20 % saving known to +-2.5 %, not named by --what-if).
  const auto parsed = nlohmann::json::parse(json.str());
  const auto& step = parsed["what_ifs"]["changed_steps"][0];
  EXPECT_EQ(step["named"], false);
  EXPECT_EQ(step["saving_known"], true);
}


// --what-if N names a candidate, listed or not: a second run pairs anew, and a what-if whose saving
// sits at the least effect may drop out of its lists (seen on an H100: the first run listed an
// algorithm what-if as 1 and the fp8 ones as 2-5 after it, the second only the fp8 ones).
TEST(WhatIfs, AWhatIfsNumberNamesItsCandidateInEveryRun) {
  ProfileResult r = quarters_step(3);
  r.candidates = {paired_candidate(WhatIfKind::kAlgorithm, 0, ratio(0.994, 0.996, 0.998)),  // below the least effect
                  paired_candidate(WhatIfKind::kPrecision, 1, ratio(0.7, 0.75, 0.8)),
                  paired_candidate(WhatIfKind::kPrecision, 2, ratio(0.8, 0.85, 0.9))};
  const WhatIfs w = what_ifs(r);
  ASSERT_TRUE(w.same_dtype.ranked.empty());
  ASSERT_EQ(w.precision.ranked.size(), 2u);
  EXPECT_EQ(w.precision.ranked[0].number, 2u);
  EXPECT_EQ(w.precision.ranked[1].number, 3u);

  r.request.what_ifs = {2, 3};
  std::vector<ChangedStep> planned = plan_changed_steps(r);
  ASSERT_FALSE(planned.empty());
  EXPECT_EQ(planned.back().name, "what-ifs 2,3");
  EXPECT_EQ(planned.back().candidates, (std::vector<size_t>{1, 2}));
  EXPECT_EQ(planned.back().why_not, "");

  EXPECT_TRUE(planned.back().unlisted.empty());
  r.request.what_ifs = {1};  // not listed in this run, still the change it named, and its line says so
  planned = plan_changed_steps(r);
  EXPECT_EQ(planned.back().candidates, (std::vector<size_t>{0}));
  EXPECT_EQ(planned.back().unlisted, (std::vector<size_t>{1}));

  r.request.what_ifs = {2, 4};
  planned = plan_changed_steps(r);
  EXPECT_TRUE(planned.back().candidates.empty());
  EXPECT_EQ(planned.back().why_not, "--what-if: there is no what-if 4 (this profile's are numbered 1 to 3)");

  r.candidates.clear();
  r.request.what_ifs = {1};
  EXPECT_EQ(plan_changed_steps(r).back().why_not, "--what-if: there is no what-if 1 (this profile has none)");
}

}  // namespace
}  // namespace shapescope
