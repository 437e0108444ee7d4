#!/usr/bin/env bash
# The reports of the committed H200 and H100 sweeps and their screenshots (no GPU needed):
#   scripts/build.sh && apt-get install chromium-headless-shell && docs/render_report.sh
# Writes docs/report-h200.html and docs/report-h100.html (open them in any browser; they fetch
# nothing) and docs/report-h200.png, docs/report-h100.png (the top of each page, 1280 pixels wide, as
# headless Chromium draws it). SHAPESCOPE_BIN chooses the binary (default build/shapescope; the
# CPU-only build's writes the same pages).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${SHAPESCOPE_BIN:-build/shapescope}
browser=$(command -v chromium-headless-shell || command -v chromium)
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
for page in h200:tests/data/h200-2026-11-21/sweep_bf16_nn_1-4096.db \
            h100:bench/speed/results/h100-2026-11-25-sweep/sweep_bf16_nn_1-4096.db; do
  name=${page%%:*}
  "$bin" report --db "${page#*:}" --out "docs/report-$name.html"
  "$browser" --no-sandbox --disable-gpu --disable-background-networking --disable-component-update --no-first-run \
    --user-data-dir="$profile" --hide-scrollbars --window-size=1280,1700 --screenshot="$PWD/docs/report-$name.png" \
    "file://$PWD/docs/report-$name.html" 2>/dev/null
done
