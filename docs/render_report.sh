#!/usr/bin/env bash
# The report of the committed H200 sweep and its screenshot (no GPU needed):
#   scripts/build.sh && apt-get install chromium-headless-shell && docs/render_report.sh
# Writes docs/report-h200.html (open it in any browser; it fetches nothing) and docs/report-h200.png
# (the top of the page, 1280 pixels wide, as headless Chromium draws it).
set -euo pipefail
cd "$(dirname "$0")/.."
build/shapescope report --db tests/data/h200-2026-11-21/sweep_bf16_nn_1-4096.db --out docs/report-h200.html
browser=$(command -v chromium-headless-shell || command -v chromium)
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$browser" --no-sandbox --disable-gpu --disable-background-networking --disable-component-update --no-first-run \
  --user-data-dir="$profile" --hide-scrollbars --window-size=1280,1700 --screenshot="$PWD/docs/report-h200.png" \
  "file://$PWD/docs/report-h200.html" 2>/dev/null
