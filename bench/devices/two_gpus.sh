#!/usr/bin/env bash
# Several GPUs of one host, measured as a user would run them (needs two GPUs; from the repository
# root with build/shapescope made, or S=path/to/shapescope):
#   bench/devices/two_gpus.sh                 # logs and stores in $OUT (default ./out)
# 1. `sweep --device 1` loads GPU 1 only: nvidia-smi sampled every 200 ms during the run, and every
#    stored point's UUID and clock.
# 2. `sweep --n 1..8192:2 --devices 0` against `--devices 0,1` (fresh stores): wall time, points per
#    GPU, each GPU's clock, duplicates, and the two stores' medians against each other.
# 3. The same two-GPU sweep while another process runs 8192^3 GEMMs on GPU 1: its share of the chunks
#    and the health line.
# 4. A two-GPU sweep whose GPU 1 worker is SIGKILLed a quarter of the way, then the same command
#    again: it measures exactly the missing points.
# Ends with a short table. Needs python3 with sqlite3 (and torch for step 3's load).
set -u -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
S=${S:-build/shapescope}
N=${N:-1..8192:2}
TOTAL=$(python3 -c "a,b=('$N'.split(':')[0]).split('..'); s=int(('$N'+':1').split(':')[1]); print(len(range(int(a),int(b)+1,s)))")
SWEEP=(sweep --n "$N")
STEPS=${STEPS:-1 2 3 4}  # a subset, e.g. STEPS="3 4"
want() { [[ " $STEPS " == *" $1 "* ]]; }
rm -f "$OUT"/two_*.db* "$OUT"/two_*.err "$OUT"/two_*.csv "$OUT"/two_*_smi.csv

now() { date +%s.%N; }
smi_start() { nvidia-smi --query-gpu=timestamp,index,uuid,utilization.gpu,clocks.sm,power.draw --format=csv,noheader,nounits -lms 200 > "$1" & echo $!; }
store_facts() {  # points, duplicate keys, then per GPU: uuid points median-clock
  python3 - "$1" <<'PY'
import sqlite3, sys, statistics
c = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
rows = c.execute("select count(*) from points").fetchone()[0]
keys = c.execute("select count(*) from (select distinct backend, algo, m, n, k, batch, lda, ldb, ldc, dtype, layout from points)").fetchone()[0]
per = []
for uuid, in c.execute("select distinct gpu_uuid from points order by gpu_uuid"):
    clocks = [r[0] for r in c.execute("select sm_clock_mhz from points where gpu_uuid=? and sm_clock_mhz is not null", (uuid,))]
    n = c.execute("select count(*) from points where gpu_uuid=?", (uuid,)).fetchone()[0]
    per.append(f"{uuid[:12]}:{n}@{statistics.median(clocks) if clocks else 0:.0f}MHz")
print(rows, rows - keys, " ".join(per))
PY
}
compare_stores() {  # median and p95 of |median_b / median_a - 1| over shared problems, in %
  python3 - "$1" "$2" <<'PY'
import sqlite3, sys
def load(p):
    c = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
    return {r[:4]: r[4] for r in c.execute("select m, n, k, algo, median_us from points")}
a, b = load(sys.argv[1]), load(sys.argv[2])
d = sorted(abs(b[k] / a[k] - 1) * 100 for k in a if k in b)
print(f"{len(d)} {d[len(d)//2]:.2f} {d[int(len(d)*0.95)]:.2f}" if d else "0 - -")
PY
}
gpu_uuid() { nvidia-smi --query-gpu=uuid --format=csv,noheader -i "$1"; }

nvidia-smi -L | tee "$OUT/two_gpus.txt"
U0=$(gpu_uuid 0); U1=$(gpu_uuid 1)

# 1. --device 1 loads GPU 1 only.
d1_rc=-; d1_smi=-; d1_store=-; one_rc=-; one_s=1; one_store=-; two_rc=-; two_s=1; two_store=-; agree=-; again=-
loaded_rc=-; loaded_s=-; loaded_store=-; kill_rc=-; before=0; rerun_rc=-; rerun=-; kill_store=-
if want 1; then
smi=$(smi_start "$OUT/two_device1_smi.csv")
t0=$(now)
$S sweep --n 7000..8192:8 --device 1 --db "$OUT/two_device1.db" --format csv --out "$OUT/two_device1.csv" 2> "$OUT/two_device1.err"
d1_rc=$?
kill "$smi"; wait "$smi" 2>/dev/null
d1_smi=$(python3 - "$OUT/two_device1_smi.csv" <<'PY'
import sys, collections
util = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = [x.strip() for x in line.split(",")]
    if len(f) >= 6 and f[3].isdigit(): util[f[1]].append(int(f[3]))
print(" ".join(f"GPU{g}:max{max(u)}%,mean{sum(u)/len(u):.0f}%" for g, u in sorted(util.items())))
PY
)
d1_store=$(store_facts "$OUT/two_device1.db")
fi

# 2. One GPU against two.
if want 2; then
t0=$(now); $S "${SWEEP[@]}" --devices 0 --db "$OUT/two_one.db" --format csv --out "$OUT/two_one.csv" 2> "$OUT/two_one.err"; one_rc=$?; t1=$(now)
one_s=$(python3 -c "print(f'{$t1-$t0:.1f}')")
t0=$(now); $S "${SWEEP[@]}" --devices 0,1 --db "$OUT/two_two.db" --format csv --out "$OUT/two_two.csv" 2> "$OUT/two_two.err"; two_rc=$?; t1=$(now)
two_s=$(python3 -c "print(f'{$t1-$t0:.1f}')")
one_store=$(store_facts "$OUT/two_one.db"); two_store=$(store_facts "$OUT/two_two.db")
agree=$(compare_stores "$OUT/two_one.db" "$OUT/two_two.db")
# Repeatability on the same GPU for scale: GPU 0 again, alone.
$S "${SWEEP[@]}" --devices 0 --db "$OUT/two_one_again.db" --format csv --out "$OUT/two_scratch.csv" 2> "$OUT/two_one_again.err"
again=$(compare_stores "$OUT/two_one.db" "$OUT/two_one_again.db")
fi

# 3. GPU 1 loaded by another process.
if want 3; then
python3 -c "
import torch, time
a = torch.randn(8192, 8192, device='cuda:1', dtype=torch.bfloat16); b = torch.randn_like(a)
end = time.time() + 90
while time.time() < end:
    for _ in range(20): c = a @ b
    torch.cuda.synchronize(1)
" > "$OUT/two_load.log" 2>&1 &
load=$!
sleep 8
t0=$(now); $S "${SWEEP[@]}" --devices 0,1 --db "$OUT/two_loaded.db" --format csv --out "$OUT/two_scratch.csv" 2> "$OUT/two_loaded.err"; loaded_rc=$?; t1=$(now)
loaded_s=$(python3 -c "print(f'{$t1-$t0:.1f}')")
kill "$load"; wait "$load" 2>/dev/null
loaded_store=$(store_facts "$OUT/two_loaded.db")
fi

# 4. SIGKILL the GPU 1 worker a quarter of the way, then the same command again.
stored_now() { python3 -c "import sqlite3; print(sqlite3.connect('file:$1?mode=ro', uri=True).execute('select count(*) from points').fetchone()[0])" 2>/dev/null || echo 0; }
db="$OUT/two_kill.db"
if want 4; then
$S "${SWEEP[@]}" --devices 0,1 --db "$db" --format csv --out "$OUT/two_scratch.csv" 2> "$OUT/two_kill_1.err" &
parent=$!
for _ in $(seq 1 600); do
  { [ "$(stored_now "$db")" -gt $((TOTAL / 4)) ] || ! kill -0 "$parent" 2>/dev/null; } && break
  sleep 0.05
done
worker=$(pgrep -P "$parent" -f -- "--device 1" | head -1)
kill -KILL "$worker"; wait "$parent"; kill_rc=$?
before=$(stored_now "$db")
$S "${SWEEP[@]}" --devices 0,1 --db "$db" --format csv --out "$OUT/two_scratch.csv" 2> "$OUT/two_kill_2.err"; rerun_rc=$?
rerun=$(grep -o "measured [0-9]* points, reused [0-9]*" "$OUT/two_kill_2.err" | tail -1 | awk '{print $2, $5}')
kill_store=$(store_facts "$db")
fi

echo "--- stderr tails"
tail -n 4 "$OUT"/two_*.err
echo
echo "GPU 0 $U0, GPU 1 $U1; plan $N = $TOTAL problems"
echo "check                                            result"
echo "1. --device 1: exit; nvidia-smi utilisation     $d1_rc; $d1_smi"
echo "   store: points, dups, per GPU                 $d1_store"
echo "2. --devices 0: exit, wall s; store             $one_rc, $one_s; $one_store"
echo "   --devices 0,1: exit, wall s; store           $two_rc, $two_s; $two_store"
echo "   speed-up                                     $(python3 -c "print(f'{$one_s/$two_s:.2f}x')")"
echo "   two-GPU vs one-GPU medians: n, median, p95 % $agree"
echo "   GPU 0 again vs GPU 0: n, median, p95 %       $again"
echo "3. GPU 1 loaded: exit, wall s; store            $loaded_rc, $loaded_s; $loaded_store"
echo "   health lines: $(grep -c '^warning: GPU' "$OUT/two_loaded.err" 2>/dev/null)"
grep -hE "^(GPU [01] |warning: GPU)" "$OUT"/two_two.err "$OUT"/two_loaded.err 2>/dev/null | sed 's/^/   /'
echo "4. worker killed: exit; stored                  $kill_rc; $before of $TOTAL"
echo "   rerun: exit; measured, reused (missing $((TOTAL - before)))  $rerun_rc; $rerun"
echo "   store: points, dups, per GPU                 $kill_store"
