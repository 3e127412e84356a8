#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
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
if [ -x "$B/poisson/stardiff-poisson" ]; then
  run "$B/poisson/stardiff-poisson" --adjoint --probe 3,4 --probe 10,10
fi
if [ -x "$B/heat/stardiff-heat" ]; then
  run "$B/heat/stardiff-heat" --probe 10,20 --probe 32,32
fi
if [ -x "$B/ldlt/stardiff-ldlt" ]; then
  run "$B/ldlt/stardiff-ldlt" "$ROOT/apps/ldlt/data/kkt12.mtx"
  run "$B/ldlt/stardiff-ldlt" "$ROOT/apps/ldlt/data/lap2d16_general.mtx" --ordering metis
fi
if [ -x "$B/pf/stardiff-pf" ]; then
  run "$B/pf/stardiff-pf" "$ROOT/apps/pf/data/case9.m"
  run "$B/pf/stardiff-pf" "$ROOT/apps/pf/data/case1354pegase.m" --qlim
fi
if [ -x "$B/cloverleaf/stardiff-cloverleaf" ]; then
  run "$B/cloverleaf/stardiff-cloverleaf" "$ROOT/apps/cloverleaf/decks/clover.in_default"
fi
if [ -x "$B/cde/stardiff-cde" ]; then
  run "$B/cde/stardiff-cde" --ns 200 --nv 100 --steps 100
fi
echo; echo "demo: done"
