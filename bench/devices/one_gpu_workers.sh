#!/usr/bin/env bash
# `sweep --devices` on a GPU host (one GPU is enough), from the repository root with build/ made:
#   bench/devices/one_gpu_workers.sh            # logs and stores in $OUT (default ./out)
# 1. `--devices 0` against no option: same points, same keys, same table order, similar times.
# (N=1..1024 bench/devices/one_gpu_workers.sh for a shorter run; the stops must still land mid-way.)
# 2. A --devices sweep whose worker is killed (SIGKILL) mid-way, then the same command again: it
#    measures only the missing points. 3. The same with ^C (SIGINT to the parent, forwarded).
# Ends with a short table. Needs python3 (sqlite3 module) for the counts.
set -u -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
S=${S:-build/shapescope}
N=${N:-1..4096}  # large enough that the stops below land mid-way
TOTAL=$(python3 -c "a,b='$N'.split('..'); print(int(b)-int(a)+1)")
SWEEP=(sweep --n "$N" --samples 5)
rm -f "$OUT"/dev_*.db*

count() {  # points, duplicate keys, integrity of a store
  [ -f "$1" ] || { echo "0 0 no-store"; return; }
  python3 - "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
rows = c.execute("select count(*) from points").fetchone()[0]
keys = c.execute("select count(*) from (select distinct gpu_uuid, backend, algo, m, n, k, batch, lda, ldb, ldc from points)").fetchone()[0]
ok = c.execute("pragma integrity_check").fetchone()[0]
print(rows, rows - keys, ok)
PY
}
summary_field() {  # "measured X points, reused Y" from a sweep's stderr
  local found
  found=$(grep -o "measured [0-9]* points, reused [0-9]*" "$1" | tail -1 | awk '{print $2, $5}')
  echo "${found:-- -}"
}
# Stored points while a sweep runs (the store is in WAL mode: read through it).
stored_now() { [ -f "$1" ] || { echo 0; return; }; python3 -c "import sqlite3; print(sqlite3.connect('file:$1?mode=ro', uri=True).execute('select count(*) from points').fetchone()[0])" 2>/dev/null || echo 0; }

# 1. --devices 0 against no option.
$S "${SWEEP[@]}" --db "$OUT/dev_plain.db" --format csv --out "$OUT/dev_plain.csv" 2> "$OUT/dev_plain.err"
plain_rc=$?
$S "${SWEEP[@]}" --db "$OUT/dev_devices.db" --devices 0 --format csv --out "$OUT/dev_devices.csv" 2> "$OUT/dev_devices.err"
devices_rc=$?
same_order=$(python3 - "$OUT/dev_plain.csv" "$OUT/dev_devices.csv" 2>/dev/null <<'PY' || echo "NO (no results)"
import csv, sys, statistics
a = list(csv.DictReader(open(sys.argv[1]))); b = list(csv.DictReader(open(sys.argv[2])))
key = lambda r: (r["backend"], r["algo"], r["m"], r["n"], r["k"], r["gpu_uuid"])
same = [key(r) for r in a] == [key(r) for r in b]
ratio = statistics.median(float(y["median_us"]) / float(x["median_us"]) for x, y in zip(a, b)) if same and a else 0
print(f"{'yes' if same else 'NO'} {ratio:.3f}")
PY
)
header_same=$([ "$(head -1 "$OUT/dev_plain.err")" = "$(head -1 "$OUT/dev_devices.err")" ] && echo yes || echo NO)

# 2. and 3. Stop a --devices sweep once a quarter of its points is stored (SIGKILL to its worker, or
# SIGINT to the parent, which forwards it), then run the same command again. Prints: exit, stored,
# the rerun's exit, measured, reused, and the store's points, duplicates and integrity.
stop_and_resume() {  # NAME SIGNAL worker|parent
  local db="$OUT/dev_$1.db" parent rc stored rerun_rc
  $S "${SWEEP[@]}" --db "$db" --devices 0 --format csv --out "$OUT/dev_$1.csv" 2> "$OUT/dev_$1_1.err" &
  parent=$!
  for _ in $(seq 1 300); do
    { [ "$(stored_now "$db")" -gt $((TOTAL / 4)) ] || ! kill -0 "$parent" 2>/dev/null; } && break
    sleep 0.1
  done
  if [ "$3" = worker ]; then kill "-$2" "$(pgrep -P "$parent" | head -1)" 2>/dev/null; else kill "-$2" "$parent" 2>/dev/null; fi
  wait "$parent"; rc=$?
  read -r stored _ _ <<< "$(count "$db")"
  $S "${SWEEP[@]}" --db "$db" --devices 0 --format csv --out "$OUT/dev_$1.csv" 2> "$OUT/dev_$1_2.err"
  rerun_rc=$?
  echo "$rc $stored $rerun_rc $(summary_field "$OUT/dev_$1_2.err") $(count "$db")"
}
rows() {  # LABEL RC STORED RERUN_RC MEASURED REUSED POINTS DUPS OK
  echo "$1: exit, stored                 $2, $3 (mid-way: $([ "$3" -gt 0 ] && [ "$3" -lt "$TOTAL" ] && echo yes || echo NO))"
  echo "  rerun: exit, measured, reused         $4, $5 (missing $((TOTAL - $3))), $6"
  echo "  rerun measured only the missing       $([ "$5" = "$((TOTAL - $3))" ] && [ "$6" = "$3" ] && echo yes || echo NO)"
  echo "  store: points, duplicates, integrity  $7/$TOTAL, $8, $9"
}
killed=$(stop_and_resume kill KILL worker)
interrupted=$(stop_and_resume int INT parent)

read -r plain_rows plain_dups _ <<< "$(count "$OUT/dev_plain.db")"
read -r devices_rows devices_dups _ <<< "$(count "$OUT/dev_devices.db")"
echo "--- last stderr lines"
tail -n 2 "$OUT/dev_plain.err" "$OUT/dev_devices.err" "$OUT/dev_kill_1.err" "$OUT/dev_kill_2.err" "$OUT/dev_int_1.err" "$OUT/dev_int_2.err"
echo
echo "check                                   result"
echo "no option: exit, points, duplicates     $plain_rc, $plain_rows/$TOTAL, $plain_dups"
echo "--devices 0: exit, points, duplicates   $devices_rc, $devices_rows/$TOTAL, $devices_dups"
echo "same rows in the same order; median time ratio (devices/plain)   $same_order"
echo "same device header line                 $header_same"
rows "worker SIGKILLed (exit 1)" $killed
rows "parent SIGINTed (exit 130)" $interrupted
