#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/mpi/same_text.sh — a driver's printed text on 1 rank and under mpirun on N ranks, identical.
# Usage: same_text.sh MPIRUN NRANKS [--ignore REGEX]... DRIVER ARGS... — runs DRIVER ARGS once
# without mpirun (STARDIFF_MPI=0) and once as `MPIRUN --allow-run-as-root --oversubscribe
# --bind-to none -np NRANKS DRIVER ARGS`; fails unless both exit with the same status and their
# stdout, less the lines matching an --ignore REGEX (grep -E: timing lines), is byte-identical
# (then rank 0 alone printed, and printed what one rank prints). MPIRUN "none" or "nompi":
# prints stardiff-test-skipped (mpirun or StarPU-MPI absent).
set -u
mpirun="$1" n="$2"; shift 2
drop="$(printf '\001')"  # matches no line of text output
while [ "${1:-}" = "--ignore" ]; do drop="$drop|$2"; shift 2; done
case "$mpirun" in
  none) echo "stardiff-test-skipped: mpirun is absent (package openmpi-bin)"; exit 0 ;;
  nompi) echo "stardiff-test-skipped: stardiff was built without StarPU-MPI (starpumpi-1.3, MPI)"; exit 0 ;;
esac
dir=$(mktemp -d "${TMPDIR:-/tmp}/stardiff-mpi.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
STARDIFF_MPI=0 "$@" > "$dir/one.txt"
rc1=$?
"$mpirun" --allow-run-as-root --oversubscribe --bind-to none -np "$n" "$@" > "$dir/many.txt"
rcn=$?
[ "$rc1" -eq "$rcn" ] || { echo "exit status: $rc1 on 1 rank, $rcn on $n ranks"; exit 1; }
grep -v -E "$drop" "$dir/one.txt" > "$dir/one.kept"
grep -v -E "$drop" "$dir/many.txt" > "$dir/many.kept"
[ -s "$dir/one.kept" ] || { echo "the 1-rank run printed nothing (once the ignored lines are dropped)"; exit 1; }
if ! cmp -s "$dir/one.kept" "$dir/many.kept"; then
  echo "printed text differs (< 1 rank, > $n ranks):"
  diff "$dir/one.kept" "$dir/many.kept" | head -40
  exit 1
fi
echo "same text on 1 and $n ranks (exit $rc1): $(wc -l < "$dir/one.kept") lines compared, $(($(wc -l < "$dir/one.txt") - $(wc -l < "$dir/one.kept"))) ignored"
