#!/usr/bin/env bash
# The data-safety battery: every case runs a shapescope binary in a fresh copy of the same
# fixtures (copies of a committed store, a results file, a copy of /etc/passwd, an earlier figure,
# damaged stores), and records its exit code, its stderr (line count and the line that matters) and
# the sha256 of every file before and after: the files the command names, and the whole folder
# (plus anything written beside /dev/null). The last column checks the promise: a command changes no
# byte except the outputs it was asked to write, and only when it succeeds. Prints Markdown.
#   bench/safety/data_safety_cases.sh [[LABEL=]BIN ...] > bench/safety/results/data-safety-cases.md
# Default: build/shapescope and build-cpu/shapescope, those that exist. Needs sqlite3 (the Debian
# package) for the damaged stores; without it those cases are left out. Run it as root, as CI runs.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
squares=$src/tests/data/h200-2026-11-21/sweep_bf16_nn_1-4096.db
work=$(mktemp -d /tmp/shapescope_safety_XXXXXX)
trap 'rm -rf "$work"; rm -f /dev/null.svg /dev/null.png /dev/null.gp /dev/null.dat' EXIT
fixtures=$work/fixtures
run_dir=$work/run
violations=0

# A writer killed half way through a transaction, as kill -9 leaves it: STORE plus its -journal
# (rollback mode) or -wal/-shm (WAL mode, the transaction committed but not yet checkpointed).
killed_writer() {
  local store=$1 mode=$2 sql
  if [ "$mode" = wal ]; then
    sql="PRAGMA journal_mode = WAL; UPDATE points SET median_us = median_us * 2 WHERE n = 64;"
  else
    sql="PRAGMA cache_size = 5; BEGIN; UPDATE points SET median_us = median_us * 1000; DELETE FROM kernels;"
  fi
  (echo "$sql"; sleep 3) | sqlite3 "$store" >/dev/null &
  local pid=$!
  sleep 1
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}

make_fixtures() {
  mkdir -p "$fixtures/plotdir"
  cd "$fixtures" || exit 1
  cp "$squares" store.db
  printf 'precious user data\n' > results.csv
  cp /etc/passwd passwd
  printf 'an earlier figure\n' > plotdir/flops.svg
  if command -v sqlite3 >/dev/null; then
    cp "$squares" newer.db
    sqlite3 newer.db "UPDATE meta SET value = '99' WHERE key = 'schema_version'"
    cp "$squares" hot.db
    killed_writer hot.db journal
    cp "$squares" wal.db
    killed_writer wal.db wal
    cp wal.db walonly.db && cp wal.db-wal walonly.db-wal
    cp "$squares" swept.db
    sqlite3 swept.db "PRAGMA journal_mode = WAL" >/dev/null
  fi
}

snap() {
  (find . -type f -print0 | sort -z | xargs -0 -r sha256sum | awk '{print $2, $1}'
   for f in /dev/null.*; do [ -e "$f" ] && echo "$f (exists)"; done) 2>/dev/null
}
short() { [ -n "$1" ] && echo "${1:0:12}" || echo "none"; }
hash_of() { awk -v f="./$2" '$1 == f {print $2}' <<<"$1"; }

# The files a command names: its arguments that are files in the folder, or folders (their files).
named_files() {
  local arg
  for arg in "$@"; do
    arg=${arg%/}; arg=${arg#./}
    [ -n "$arg" ] && [ "$arg" != . ] || continue
    if [ -f "$run_dir/$arg" ]; then
      echo "$arg"
      for suffix in -journal -wal -shm; do [ -f "$run_dir/$arg$suffix" ] && echo "$arg$suffix"; done
    elif [ -d "$run_dir/$arg" ] && [ "$arg" != /dev ]; then
      (cd "$run_dir" && find "$arg" -type f | sort)
    fi
  done | sort -u
}

# With a GPU, a measuring command (sweep, explain, pad without --dry-run; info --calibrate) that
# succeeds may write its store (--db, or shapescope.db) and its --out: the files it may change.
measured_outputs() {
  [ "$gpu" = 1 ] || return 0
  local args=" $* " db=shapescope.db out="" prev="" a
  case "$1" in
    sweep|explain|pad) [[ "$args" == *" --dry-run "* || "$args" == *" --gpu "* ]] && return 0 ;;
    info) [[ "$args" == *" --calibrate "* ]] || return 0 ;;
    *) return 0 ;;
  esac
  for a in "$@"; do
    [ "$prev" = --db ] && db=$a
    [ "$prev" = --out ] && out=$a
    prev=$a
  done
  echo "$db $db-wal $db-shm $db-journal $out"
}

# case_ ALLOWED ARGS...: ALLOWED is '-' (no byte may change) or the files that a successful command
# writes (space separated; 'plotdir/*' for anything in that folder).
case_() {
  local allowed="$1 $(measured_outputs "${@:2}")"; shift
  rm -rf "$run_dir"
  cp -a "$fixtures" "$run_dir"
  cd "$run_dir" || exit 1
  local before after rc
  before=$(snap)
  local named; named=$(named_files "$@")
  "$bin" "$@" >/dev/null 2>"$work/err"
  rc=$?
  after=$(snap)
  local lines shown
  lines=$(wc -l <"$work/err")
  shown=$(grep -m1 -E '^(shapescope|warning):' "$work/err" || head -n 1 "$work/err")
  shown=$(cut -c1-220 <<<"$shown" | sed 's/|/\\|/g')
  local cmd="shapescope" a
  for a in "$@"; do cmd+=" $(printf '%q' "$a")"; done
  local files="" f
  for f in $named; do
    local b c
    b=$(hash_of "$before" "$f"); c=$(hash_of "$after" "$f")
    if [ "$b" = "$c" ]; then files+="$f $(short "$b") = ; "; else files+="$f $(short "$b") → $(short "$c"); "; fi
  done
  [ -n "$files" ] || files="(names no file)"
  # Every difference in the folder: changed, created or removed files.
  local changes
  changes=$(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | awk '{print $2}' | sort -u | sed 's|^\./||' | tr '\n' ' ')
  local verdict="ok" folder
  if [ -z "$changes" ]; then
    folder="same ($(short "$(sha256sum <<<"$before" | cut -c1-64)"))"
  else
    folder="changed: $changes"
    for f in $changes; do
      local fine=0 pattern
      for pattern in $allowed; do [[ "$pattern" != - && "$f" == $pattern ]] && fine=1; done
      [ "$rc" -eq 0 ] || fine=0
      [ "$fine" -eq 1 ] || verdict="**VIOLATION**"
    done
  fi
  [ "$lines" -le 1 ] || [ "$rc" -eq 0 ] || verdict="**VIOLATION** (stderr $lines lines)"
  [ "$rc" -lt 126 ] || verdict="**VIOLATION** (exit $rc: crashed or did not run)"
  [ "$verdict" = ok ] || violations=$((violations + 1))
  printf '| `%s` | %s | %s | %s | %s | %s | %s |\n' "$cmd" "$rc" "$lines" "$shown" "$files" "$folder" "$verdict"
  rm -f /dev/null.svg /dev/null.png /dev/null.gp /dev/null.dat
}

battery() {
  printf '| command | exit | stderr lines | stderr (the error or warning line) | sha256 of the files it names, before → after | the whole folder | promise |\n'
  printf '|---|---|---|---|---|---|---|\n'
  # --out: never emptied or replaced by a failing command; the store, folders and devices refused.
  case_ - sweep --n 64 --out results.csv
  case_ - sweep --n 64 --out results.csv --db store.db
  case_ - sweep --n 64 --out passwd
  case_ - sweep --n 64 --out store.db --db store.db
  case_ - sweep --n 64 --out ./store.db --db store.db
  case_ - sweep --n 64 --out store.db-wal --db store.db
  case_ - sweep --n 64 --out plotdir
  case_ - sweep --n 64 --out /dev/null
  case_ - sweep --n 64 --out missing/x.csv
  case_ - sweep --n 200000 --out results.csv --db store.db
  case_ - export --db store.db --out store.db
  case_ - export --db store.db --out /dev/null
  case_ - export --db store.db --out results.csv --dtype fp16
  case_ results.csv export --db store.db --out results.csv --n 1..8
  # Commands without a GPU on a committed store (rollback journal, no annotations table): a measuring
  # command fails without writing, a view only reads.
  case_ - sweep --n 64
  case_ - sweep --n 64 --db store.db
  case_ - info
  case_ - info --db store.db
  case_ - info --db store.db --calibrate
  case_ - explain 1793
  case_ - explain 1793 --db store.db
  case_ - explain 1793 --db store.db --json
  case_ - explain 4095 --db store.db --layout nt
  case_ - pad --model gpt2 --tokens 12288 --db store.db
  case_ - pad --model gpt2 --tokens 12288 --train --dry-run --db store.db
  case_ - export --db store.db
  case_ - export --db store.db --format json --n 1..64
  case_ - sweep --n 1..64 --db store.db --dry-run
  case_ 'plotdir/*' plot flops --db store.db --out plotdir/
  case_ 'plotdir/*' plot waves --db store.db --out plotdir/ --n 1..2048
  case_ 'plotdir/*' plot tilegrid 1793 --db store.db --out plotdir/
  case_ - plot flops --db store.db --out /dev/null
  case_ - plot flops --db store.db --out plotdir/ --dtype fp16
  case_ - plot flops --db store.db --out plotdir/ --gnuplot /nonexistent/gnuplot
  case_ - plot flops --db store.db --out plotdir/ --templates /nonexistent
  # Stores that must be refused, never rewritten: newer schema, directory, empty path, a write cut
  # off in rollback mode (its -journal must be rolled back first), a -wal without its -shm. Stores in
  # WAL mode, with and without a left-over -wal: read through it, no -wal/-shm made or changed.
  if [ -f "$fixtures/newer.db" ]; then
    case_ - explain 1793 --db newer.db
    case_ - export --db newer.db
    case_ - plot flops --db newer.db --out plotdir/
    case_ - info --db newer.db
    case_ - sweep --n 64 --db newer.db
    case_ - explain 1793 --db hot.db
    case_ - export --db hot.db
    case_ - plot flops --db hot.db --out plotdir/
    case_ - sweep --n 64 --db hot.db
    case_ - explain 1793 --db wal.db
    case_ - export --db wal.db --n 64
    case_ - sweep --n 64 --db wal.db
    case_ - export --db walonly.db --n 64
    case_ - sweep --n 64 --db swept.db
    case_ - info --db swept.db
    case_ - explain 1793 --db swept.db
    case_ - export --db swept.db --n 64
  fi
  case_ - sweep --n 64 --db plotdir
  case_ - explain 1793 --db plotdir
  case_ - export --db plotdir
  case_ - plot flops --db plotdir --out plotdir/
  case_ - sweep --n 64 --db ''
  case_ - info --db ''
  case_ - explain 1793 --db ''
  case_ - export --db ''
  case_ - pad --model gpt2 --tokens 12288 --db ''
  # Option edge cases: one line naming the option and the value, exit 2.
  case_ - sweep --n 64 --shard 1/99999999999999999999
  case_ - sweep --n 64 --shard 18446744073709551617/18446744073709551617
  case_ - sweep --n 64 --shard 0/3
  case_ - sweep --n 64 --device -1
  case_ - explain 1793 --device -1 --db store.db
  case_ - info --device -1
  case_ - sweep --n 64 --seed -1
  case_ - sweep --n 64 --seed 18446744073709551616
  case_ - explain 99999999999
  case_ - explain 64x64x99999999999
  case_ - plot tilegrid 99999999999 --gpu a100 --tile 256x128
  case_ - sweep --n 99999999999
  case_ - sweep --n 64 --lda 100 --ld-pad 8
  case_ - sweep --n 64 --dry-run --format csv
  case_ - sweep --n 64 --dry-run --out results.csv
  # Plans whose estimates are absurd: the warning with the number, or a refusal.
  case_ - sweep --n 200000 --dry-run
  case_ - sweep --n 1..100000 --dry-run
  case_ - sweep --n 1..5000 --m 1..5000 --dry-run
}

bins=()
for spec in "$@"; do
  label=${spec%%=*}; bin=${spec#*=}
  [ "$label" = "$spec" ] && label=$bin
  bins+=("$label=$(realpath "$bin")")
done
if [ ${#bins[@]} -eq 0 ]; then
  for b in build build-cpu; do [ -x "$src/$b/shapescope" ] && bins+=("$b/shapescope=$src/$b/shapescope"); done
fi
gpu=0
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 && gpu=1
make_fixtures
cd "$fixtures" || exit 1
echo "# Data-safety cases (issue 18)"
echo
echo "Made by \`bench/safety/data_safety_cases.sh\`, as $(id -un), on a machine with$([ "$gpu" = 1 ] || echo "out") a GPU."
echo "Each command runs in a fresh copy of these files (sha256, first 12 digits; \`=\` after a file: not a byte changed):"
echo
for f in $(find . -type f | sort); do
  case ${f#./} in
    store.db) what="copy of tests/data/h200-2026-11-21/sweep_bf16_nn_1-4096.db (journal_mode=delete, no annotations table)" ;;
    results.csv) what="a user's results file" ;;
    passwd) what="copy of /etc/passwd" ;;
    plotdir/flops.svg) what="an earlier figure" ;;
    newer.db) what="store.db with schema_version 99 (a newer shapescope's)" ;;
    hot.db|hot.db-journal) what="store.db after a rollback-mode writer was killed mid-transaction (hot journal)" ;;
    wal.db|wal.db-wal|wal.db-shm) what="store.db after a WAL-mode writer was killed after its commit (left-over -wal)" ;;
    walonly.db|walonly.db-wal) what="wal.db and its -wal without the -shm (a copy that left it out)" ;;
    swept.db) what="store.db in WAL mode, as every store a sweep wrote (no -wal while no one writes)" ;;
    *) what="" ;;
  esac
  echo "- \`${f#./}\` $(sha256sum "$f" | cut -c1-12): $what"
done
echo
echo "promise: ok when no file changed, or only the files the command was asked to write and it exited 0"
echo "(with a GPU, a measuring command's store and --out), and a failing command said one line."
for spec in "${bins[@]}"; do
  label=${spec%%=*}; bin=${spec#*=}
  echo
  echo "## $label"
  echo
  echo "\`$("$bin" --version 2>&1 | head -n 1)\`"
  echo
  before=$violations
  battery
  echo
  echo "Violations of the promise by this binary: $((violations - before))"
done
[ "$violations" -eq 0 ]
