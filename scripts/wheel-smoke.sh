#!/usr/bin/env bash
# Packaging check: build the wheel, install it into a fresh virtual environment (not the editable
# checkout), and from there run `codereval demo` and the example of docs/api.md, with an empty
# codereval cache so the Java tools build themselves on first use. A package data file missing
# from the wheel, or an import of a package the wheel does not declare, fails here.
#
#   bash scripts/wheel-smoke.sh
#
# PYTHON: the interpreter that builds and hosts the venv [.venv/bin/python, else python3].
# HUMANEVALX_DIR: the folder holding humaneval_python.jsonl.gz [../shared/data/humanevalx].
# KEEP=1 keeps the scratch directory (wheel, venv, runs) for a look afterwards.
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
if [ -z "${PYTHON:-}" ]; then
  if [ -x "$REPO/.venv/bin/python" ]; then PYTHON="$REPO/.venv/bin/python"; else PYTHON=python3; fi
fi
HUMANEVALX_DIR="${HUMANEVALX_DIR:-$REPO/../shared/data/humanevalx}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/codereval-wheel-smoke.XXXXXX")"
if [ "${KEEP:-}" = "1" ]; then
  echo "wheel-smoke: keeping $WORK"
else
  trap 'rm -rf "$WORK"' EXIT
fi
step() { echo "== wheel-smoke: $*"; }

if [ ! -f "$HUMANEVALX_DIR/humaneval_python.jsonl.gz" ]; then
  echo "wheel-smoke: $HUMANEVALX_DIR/humaneval_python.jsonl.gz not found (set HUMANEVALX_DIR)" >&2
  exit 2
fi

step "build the wheel from a copy of the sources"
# A copy, so the build leaves no build/ or egg-info in the checkout and sees only the sources.
mkdir -p "$WORK/source" "$WORK/dist"
tar -C "$REPO" --exclude='*.egg-info' --exclude='__pycache__' -cf - pyproject.toml README.md src \
  | tar -C "$WORK/source" -xf -
"$PYTHON" -m pip wheel --quiet --no-deps --wheel-dir "$WORK/dist" "$WORK/source"
wheels=("$WORK"/dist/codereval-*.whl)
WHEEL="${wheels[0]}"
echo "built $(basename "$WHEEL")"

step "install it into a fresh virtual environment"
VENV_PY="$WORK/venv/bin/python"
# uv (a dependency of codereval, so beside any interpreter that has it) installs from its cache
# in seconds where pip takes a minute; pip when there is none.
if "$PYTHON" -m uv --version >/dev/null 2>&1; then
  "$PYTHON" -m venv --without-pip "$WORK/venv"
  "$PYTHON" -m uv pip install --quiet --compile-bytecode --python "$VENV_PY" "$WHEEL[pandas]"
else
  "$PYTHON" -m venv "$WORK/venv"
  "$VENV_PY" -m pip install --quiet --disable-pip-version-check "$WHEEL[pandas]"
fi

mkdir -p "$WORK/run"
cd "$WORK/run"  # nowhere near the checkout: `import codereval` must find the installed wheel
"$VENV_PY" - <<'EOF'
import sys

import codereval

assert codereval.__file__.startswith(sys.prefix), f"not the installed wheel: {codereval.__file__}"
print(f"codereval {codereval.__version__} from {codereval.__file__}")
EOF

# An empty cache: environments and the Java tools are built on first use, as after a real install.
export CODEREVAL_HOME="$WORK/home"

step "codereval demo"
"$WORK/venv/bin/codereval" demo --out "$WORK/run/demo" | tee "$WORK/demo.log"
# The demo ends with the HTML report (matplotlib, pygments and numpy come from the wheel's deps).
grep -q "^HTML report (plots, every sample of every task): $WORK/run/demo/report.html$" \
  "$WORK/demo.log" || { echo "wheel-smoke: the demo did not print its report's path" >&2; exit 1; }
grep -q '<svg ' "$WORK/run/demo/report.html" \
  || { echo "wheel-smoke: the demo's report has no plot" >&2; exit 1; }
echo "demo report: $(($(stat -c %s "$WORK/run/demo/report.html") / 1024)) KiB with plots"
if command -v javac >/dev/null 2>&1 && command -v mvn >/dev/null 2>&1; then
  compgen -G "$CODEREVAL_HOME/java-tools/*/ok" >/dev/null \
    || { echo "wheel-smoke: the Java tools were not built on first use" >&2; exit 1; }
  grep -q '"passed"' "$WORK/run/demo/mini-java/outcomes.jsonl" \
    || { echo "wheel-smoke: no mini-java sample passed" >&2; exit 1; }
  grep -q '"lines_covered"' "$WORK/run/demo/mini-coderujb/outcomes.jsonl" \
    || { echo "wheel-smoke: no mini-coderujb sample has its coverage" >&2; exit 1; }
  echo "Java tools built on first use: $(dirname "$(compgen -G "$CODEREVAL_HOME/java-tools/*/ok")")"
fi

step "the example of docs/api.md"
ln -s "$HUMANEVALX_DIR" humanevalx
"$VENV_PY" "$REPO/scripts/doc_blocks.py" "$REPO/docs/api.md"

echo "wheel-smoke: ok"
