#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/cloverleaf_vs_ref/test/fake_stardiff.sh — stands in for stardiff-cloverleaf in run.py's
# tests: checks its call (`DECK --json --executor E` with DECK a clover.in and STARPU_NCPU =
# FAKE_THREADS), then prints the --json object with FAKE_STEPS steps (default 75) and tp1's
# final kinetic energy 1.8228036731025794.
set -eu
[ $# -eq 4 ] && [ "$2" = --json ] && [ "$3" = --executor ] || { echo "fake_stardiff: bad arguments: $*" >&2; exit 3; }
case "$1" in */clover.in) ;; *) echo "fake_stardiff: deck $1 is not a clover.in" >&2; exit 3;; esac
grep -q '^ *\*endclover' "$1" || { echo "fake_stardiff: $1 has no *endclover" >&2; exit 3; }
[ "${STARPU_NCPU:-}" = "${FAKE_THREADS:-2}" ] || { echo "fake_stardiff: STARPU_NCPU=${STARPU_NCPU:-unset}" >&2; exit 3; }
echo "{\"wall_s\":0.01,\"steps\":${FAKE_STEPS:-75},\"summary\":{\"volume\":20.0,\"mass\":12.0,\"density\":0.6,\"pressure\":0.5012,\"ie\":25.06,\"ke\":1.8228036731025794,\"te\":26.88}}"
