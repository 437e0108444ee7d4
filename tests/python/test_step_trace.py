"""scripts/step_trace.py: the split of a trace whose steps alternate between a model without a change
and with it (record_trace.py --alternate-baseline) into one trace per variant, each kernel with the
step whose launch made it, and the kernel times the bench scripts compare."""
import sys
import unittest

import support

sys.path.insert(0, str(support.ROOT / "scripts"))
import step_trace  # noqa: E402


def alternated_trace():
    """Steps A B B A (ranges Base#i / Changed#i) with one launch each; every kernel ends on the GPU
    after its step's host range has closed, as asynchronous kernels do."""
    events = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}}]
    steps = [("Base#0", 0), ("Changed#0", 1000), ("Changed#1", 2000), ("Base#1", 3000)]
    for i, (name, t) in enumerate(steps):
        kernel_us = 10 if name.startswith("Base") else 4
        events += [
            {"ph": "X", "cat": "user_annotation", "name": name, "ts": t, "dur": 500, "tid": 7},
            {"ph": "X", "cat": "gpu_user_annotation", "name": name, "ts": t + 600, "dur": 300, "tid": 8},
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": t + 10, "dur": 50, "tid": 7,
             "args": {"External id": 100 + i}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": t + 20, "dur": 5, "tid": 7,
             "args": {"correlation": 200 + i, "External id": 100 + i}},
            {"ph": "s", "cat": "ac2g", "id": 200 + i, "ts": t + 20},
            {"ph": "f", "cat": "ac2g", "id": 200 + i, "ts": t + 700},
            {"ph": "X", "cat": "kernel", "name": "nvjet_hsh_128x256", "ts": t + 700, "dur": kernel_us,
             "args": {"correlation": 200 + i, "External id": 100 + i}},
        ]
    # A synchronisation between steps: in neither range, kept by both.
    events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "ts": 900, "dur": 50, "tid": 7,
                   "args": {"correlation": 999}})
    return {"deviceProperties": [{"name": "H100"}], "traceEvents": events}


class SplitAlternated(unittest.TestCase):
    def setUp(self):
        self.base, self.changed = step_trace.split_alternated(alternated_trace(), "Base#", "Changed#")

    def test_each_kernel_goes_with_the_step_that_launched_it(self):
        b, c = step_trace.events_of(self.base), step_trace.events_of(self.changed)
        self.assertEqual(step_trace.kernel_us(b), 20)
        self.assertEqual(step_trace.kernel_us(c), 8)
        self.assertEqual(len(step_trace.gemm_kernels(b)), 2)
        self.assertEqual(sorted(e["id"] for e in b if e.get("cat") == "ac2g"), [200, 200, 203, 203])

    def test_each_step_has_its_own_kernel_time(self):
        self.assertEqual(step_trace.kernel_us_per_step(step_trace.events_of(self.base)), [10, 10])
        self.assertEqual(step_trace.kernel_us_per_step(step_trace.events_of(self.changed)), [4, 4])
        # A kernel launched outside every step counts in none.
        self.assertEqual(step_trace.kernel_us_per_step(step_trace.events_of(alternated_trace()), "Base#"), [10, 10])

    def test_ranges_are_renamed_to_steps_on_both_sides(self):
        for half in (self.base, self.changed):
            events = step_trace.events_of(half)
            self.assertEqual(step_trace.steps_of(events), 2)
            self.assertFalse([e for e in events if e.get("name", "").startswith(("Base#", "Changed#"))])
            gpu = [e["name"] for e in events if e.get("cat") == "gpu_user_annotation"]
            self.assertEqual(sorted(gpu), ["ProfilerStep#0", "ProfilerStep#1"])

    def test_events_outside_every_step_and_the_trace_keys_go_to_both(self):
        for half in (self.base, self.changed):
            names = [e.get("name") for e in step_trace.events_of(half)]
            self.assertIn("process_name", names)
            self.assertIn("cudaDeviceSynchronize", names)
            self.assertEqual(half["deviceProperties"], [{"name": "H100"}])

    def test_a_trace_without_both_variants_is_refused(self):
        with self.assertRaises(ValueError):
            step_trace.split_alternated(alternated_trace(), "Base#", "Other#")

    def test_the_original_trace_is_not_changed(self):
        trace = alternated_trace()
        before = repr(trace)
        step_trace.split_alternated(trace, "Base#", "Changed#")
        self.assertEqual(repr(trace), before)


class SplitSettledSteps(unittest.TestCase):
    """record_trace.py runs settling steps under the profiler before the recorded ones and drops them."""

    def test_the_settling_steps_are_dropped_and_the_recorded_ones_kept(self):
        settle, recorded = step_trace.split_steps(alternated_trace(), ("Base#", "Changed#"))
        events = step_trace.events_of(recorded)
        self.assertEqual(step_trace.kernel_us(events), 8)  # the two Changed# kernels, not the Base# ones
        self.assertEqual(step_trace.steps_of(events), 2)
        self.assertNotIn("Base#0", [e.get("name") for e in events])
        self.assertIn("cudaDeviceSynchronize", [e.get("name") for e in events])  # outside every step: kept
        self.assertEqual(step_trace.kernel_us(step_trace.events_of(settle)), 20)

    def test_three_kinds_of_steps_split_three_ways(self):
        trace = alternated_trace()
        # A settling step before the others, with its own kernel.
        trace["traceEvents"] += [
            {"ph": "X", "cat": "user_annotation", "name": "Settle#0", "ts": -1000, "dur": 500, "tid": 7},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": -980, "dur": 5, "tid": 7,
             "args": {"correlation": 300}},
            {"ph": "X", "cat": "kernel", "name": "nvjet_hsh_128x256", "ts": -300, "dur": 99,
             "args": {"correlation": 300}},
        ]
        settle, base, changed = step_trace.split_steps(trace, ("Settle#", "Base#", "Changed#"))
        self.assertEqual(step_trace.kernel_us(step_trace.events_of(settle)), 99)
        self.assertEqual(step_trace.kernel_us(step_trace.events_of(base)), 20)
        self.assertEqual(step_trace.kernel_us(step_trace.events_of(changed)), 8)

    def test_a_kind_of_step_the_trace_lacks_is_refused(self):
        with self.assertRaisesRegex(ValueError, "no 'Settle#' ranges"):
            step_trace.split_steps(alternated_trace(), ("Settle#", "Base#"))


class SplitOlderAndInnerEvents(unittest.TestCase):
    def test_capitalised_categories_of_older_traces_split_the_same(self):
        trace = alternated_trace()
        for e in trace["traceEvents"]:
            e["cat"] = {"kernel": "Kernel", "cuda_runtime": "Runtime"}.get(e.get("cat"), e.get("cat"))
        base, changed = step_trace.split_alternated(trace, "Base#", "Changed#")
        self.assertEqual(step_trace.kernel_us(step_trace.events_of(base)), 20)
        self.assertEqual(step_trace.kernel_us(step_trace.events_of(changed)), 8)

    def test_a_gpu_range_without_a_launch_goes_with_the_step_whose_kernels_it_spans(self):
        trace = alternated_trace()
        # The GPU side of an inner record_function (e.g. the fp8 casts') inside Changed#1's kernel, which
        # runs at 2700..2704 on the GPU.
        trace["traceEvents"].append({"ph": "X", "cat": "gpu_user_annotation", "name": "casts", "ts": 2701, "dur": 2})
        base, changed = step_trace.split_alternated(trace, "Base#", "Changed#")
        self.assertNotIn("casts", [e.get("name") for e in step_trace.events_of(base)])
        self.assertIn("casts", [e.get("name") for e in step_trace.events_of(changed)])


class CastKernels(unittest.TestCase):
    def test_kernels_launched_inside_the_cast_range_outside_any_op(self):
        events = [
            {"ph": "X", "cat": "user_annotation", "name": "casts", "ts": 0, "dur": 100, "tid": 1},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 10, "dur": 2, "tid": 1,
             "args": {"correlation": 5}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 200, "dur": 2, "tid": 1,
             "args": {"correlation": 6}},
            {"ph": "X", "cat": "kernel", "name": "amax", "ts": 300, "dur": 7, "args": {"correlation": 5}},
            {"ph": "X", "cat": "kernel", "name": "nvjet", "ts": 400, "dur": 30, "args": {"correlation": 6}},
        ]
        self.assertEqual(step_trace.cast_kernel_us(events, "casts"), 7)



class MeanInterval(unittest.TestCase):
    def test_the_interval_holds_the_mean_and_narrows_with_more_pairs(self):
        few = [3.0, -1.0, 7.0, 2.0]
        mean, low, high = step_trace.mean_interval(few)
        self.assertAlmostEqual(mean, 2.75)
        self.assertTrue(low < mean < high)
        many = few * 25
        _, low100, high100 = step_trace.mean_interval(many)
        self.assertLess(high100 - low100, (high - low) / 3)
        self.assertEqual(step_trace.mean_interval(few), (mean, low, high))  # seeded: the same every run

    def test_one_value_is_refused(self):
        with self.assertRaises(ValueError):
            step_trace.mean_interval([1.0])

if __name__ == "__main__":
    unittest.main()
