#!/usr/bin/env bash
# The README's screenshot: the HTML report of the CoderEval paper's official Python results
# (ChatGPT, CodeGen, PanGu-Coder), rendered by headless Chromium into docs/report.png.
#
#   bash scripts/readme-screenshot.sh
#
# RESULTS: the folder holding <model>/Raw_Input.jsonl_out.jsonl [../shared/data/codereval/results/python].
# HEIGHT: the height of the shot in pixels [2620]; the width is 1,400.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
RESULTS="${RESULTS:-$REPO/../shared/data/codereval/results/python}"
HEIGHT="${HEIGHT:-2620}"
PY="$REPO/.venv/bin/python"
CHROMIUM="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$CHROMIUM" ]; then
  echo "readme-screenshot: chromium not found (bash scripts/setup-system.sh installs it)" >&2
  exit 2
fi
WORK="$(mktemp -d "${TMPDIR:-/tmp}/codereval-screenshot.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

"$REPO/.venv/bin/codereval" report \
  "$RESULTS/ChatGPT/Raw_Input.jsonl_out.jsonl" \
  "$RESULTS/CodeGen/Raw_Input.jsonl_out.jsonl" \
  "$RESULTS/PanGu-Coder/Raw_Input.jsonl_out.jsonl" \
  --compat --title "CoderEval Python, the paper's official results" -o "$WORK/report.html"
"$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
  --user-data-dir="$WORK/profile" --window-size="1400,$HEIGHT" \
  --screenshot="$WORK/report.png" "file://$WORK/report.html" 2>/dev/null
# A 256-colour palette keeps the PNG small (the page is flat colours and text).
"$PY" - "$WORK/report.png" "$REPO/docs/report.png" <<'PYEOF'
import sys

from PIL import Image

image = Image.open(sys.argv[1]).convert("RGB")
image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
    sys.argv[2], optimize=True
)
PYEOF
echo "wrote $REPO/docs/report.png ($(($(stat -c %s "$REPO/docs/report.png") / 1024)) KiB)"
