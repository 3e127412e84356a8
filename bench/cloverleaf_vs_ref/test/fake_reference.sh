#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/cloverleaf_vs_ref/test/fake_reference.sh — stands in for the reference CloverLeaf in
# run.py's tests: checks that it runs in a directory holding clover.in (with the line FAKE_EXPECT
# in it and FAKE_ABSENT not, when set) and OMP_NUM_THREADS=FAKE_THREADS (default 2), then
# writes FAKE_OUT to ./clover.out (with
# "PASSED" turned into "NOT PASSED" when FAKE_FAIL=1) and exits FAKE_RC (default 0).
set -eu
[ -f clover.in ] || { echo "fake_reference: no ./clover.in" >&2; exit 3; }
grep -q '^ *\*endclover' clover.in || { echo "fake_reference: clover.in has no *endclover" >&2; exit 3; }
if [ -n "${FAKE_EXPECT:-}" ] && ! grep -qx -- " *$FAKE_EXPECT *" clover.in; then
  echo "fake_reference: clover.in lacks the line '$FAKE_EXPECT'" >&2; exit 3
fi
if [ -n "${FAKE_ABSENT:-}" ] && grep -q -- "$FAKE_ABSENT" clover.in; then
  echo "fake_reference: clover.in holds '$FAKE_ABSENT'" >&2; exit 3
fi
[ "${OMP_NUM_THREADS:-}" = "${FAKE_THREADS:-2}" ] || { echo "fake_reference: OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}" >&2; exit 3; }
if [ "${FAKE_FAIL:-0}" = 1 ]; then
  sed 's/This test is considered PASSED/This is test is considered NOT PASSED/' "$FAKE_OUT" > clover.out
else
  cp "$FAKE_OUT" clover.out
fi
exit "${FAKE_RC:-0}"
