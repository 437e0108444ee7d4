# shellcheck shell=bash
# Sourced by the bench scripts that record real steps: record NAME ARGS... runs
# scripts/record_trace.py ARGS --out $W/NAME.json with its log in $W/record-NAME.txt, and prints one
# line: the exit status, the step's GEMM kernel time, the clock it ran at and its attention and experts.
# RECORD_STEPS=N records N steps per trace (record_trace.py --steps: times per step, their mean);
# RECORD_WARMUP=N runs N steps before it records (record_trace.py --warmup; its default 2);
# RECORD_SETTLE=S runs S seconds of steps under the profiler before the recorded ones (--settle-seconds).
record() {
  local name=$1
  shift
  PYTHONUNBUFFERED=1 python3 scripts/record_trace.py "$@" ${RECORD_STEPS:+--steps "$RECORD_STEPS"} \
    ${RECORD_WARMUP:+--warmup "$RECORD_WARMUP"} ${RECORD_SETTLE:+--settle-seconds "$RECORD_SETTLE"} \
    --out "$W/$name.json" > "$W/record-$name.txt" 2>&1
  echo "record $name: exit $?; $(grep -E 'ms GEMM kernel time|^clocks|^no clocks|^attention|^timed pairs' "$W/record-$name.txt" | tr '\n' ' ')"
}
