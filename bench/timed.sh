# Sourced by the bench scripts: timed NAME CMD... runs CMD with its stdout in $W/NAME.out, its stderr
# in $W/NAME.err and "rc=N seconds" in $W/NAME.time ($W: the script's work folder).
timed() {
  local name=$1; shift
  local t0=$EPOCHREALTIME
  "$@" > "$W/$name.out" 2> "$W/$name.err"
  local rc=$?
  echo "rc=$rc $(python3 -c "print(round($EPOCHREALTIME - $t0, 2))")" > "$W/$name.time"
}
