#!/usr/bin/env bash
# scripts/demo.sh — fresh Debian machine to a running demo: installs dependencies,
# configures and builds (build/), then runs stardiff-info and each sample driver on
# built-in or committed data.
set -euo pipefail
source "$(dirname "$0")/common.sh"
"$ROOT/scripts/install-deps.sh"
mkdir -p "$ROOT/build"
configure_and_build "$ROOT/build"
mkdir -p "$STARPU_HOME"
B="$ROOT/build/apps"
run() { echo; echo "\$ $*"; "$@"; }
run "$B/info/stardiff-info"
[ -x "$B/poisson/stardiff-poisson" ] && run "$B/poisson/stardiff-poisson" --adjoint --probe 3,4
[ -x "$B/ldlt/stardiff-ldlt" ] && run "$B/ldlt/stardiff-ldlt" "$ROOT/apps/ldlt/data/demo.mtx"
[ -x "$B/pf/stardiff-pf" ] && run "$B/pf/stardiff-pf" "$ROOT/apps/pf/data/case9.m"
echo; echo "demo: done"
