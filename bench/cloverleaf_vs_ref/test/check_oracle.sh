#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/cloverleaf_vs_ref/test/check_oracle.sh RUN_PY BUILD_DIR DECK RECORDED THREADS [ARGS...] —
# runs the built reference once on DECK (THREADS OpenMP threads; ARGS go to run.py, e.g.
# --fullprec) and checks that its clover.out equals RECORDED apart from the timer lines (wall
# clock, time per cell, first step overhead): the recorded oracle is what this build prints.
set -eu
out="${TMPDIR:-/tmp}/check_oracle.$$.clover.out"
trap 'rm -f "$out" "$out.a" "$out.b"' EXIT
run_py=$1 build=$2 deck=$3 recorded=$4 threads=$5
shift 5
# run.py's status is not looked at: a deck cut short (end_step=5) fails its test_problem check.
log=$(python3 "$run_py" --build-dir "$build" --no-build --ref-only --repeats 1 --threads "$threads" --deck "$deck" \
  --ref-out "$out" "$@" 2>&1) || true
[ -f "$out" ] || { echo "$log"; echo "check_oracle: the reference did not run"; exit 1; }
strip() { grep -v -e 'Wall clock' -e 'time per cell' -e 'First step overhead' "$1"; }
if strip "$out" > "$out.a" && strip "$recorded" > "$out.b" && diff "$out.b" "$out.a"; then
  echo "check_oracle: $(basename "$recorded") reproduced"
else
  echo "check_oracle: the reference's output differs from $(basename "$recorded")"
  exit 1
fi
