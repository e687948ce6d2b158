#!/usr/bin/env bash
# Installs the Debian packages codereval's sandbox and runners use, and the headless browser the
# HTML report's test renders it in (chromium), and mold, the linker HumanEval-X's C++ samples
# use when it is there (GNU ld otherwise). Idempotent: skips what is there.
# Needs root (or sudo) only when something is missing.
set -euo pipefail
need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
[ -f /usr/include/boost/any.hpp ] || need+=(libboost-dev)
[ -f /usr/include/openssl/md5.h ] || need+=(libssl-dev)
command -v mold >/dev/null 2>&1 || need+=(mold)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
echo "setup: installing Debian packages: ${need[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "setup: need root to install ${need[*]} (apt-get install ${need[*]}); continuing without them" >&2
    exit 0
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${need[@]}" >/dev/null
