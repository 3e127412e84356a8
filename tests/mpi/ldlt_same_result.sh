#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/mpi/ldlt_same_result.sh — stardiff-ldlt on 1 rank and under mpirun on N ranks: the
# same report. Usage: ldlt_same_result.sh MPIRUN NRANKS MATRIX DRIVER [--more-tasks] [ARGS...]
# runs DRIVER MATRIX ARGS --json --quiet once without MPI and once as `MPIRUN
# --allow-run-as-root --oversubscribe --bind-to none -np NRANKS DRIVER ...`; fails unless
# both exit with the same status (0, or 1 for a singular matrix), the N-rank stdout is
# exactly one line (rank 0's JSON object), and both objects are equal once timings (*_s)
# and gflops are removed — residuals, error and rcond are printed as %.17g, so equal means
# bitwise equal solutions. --more-tasks: "tasks" may differ too (a distributed run that met
# delayed columns is repeated replicated). MPIRUN "none"/"nompi", or an absent MATRIX:
# prints stardiff-test-skipped.
set -u
mpirun="$1" n="$2" matrix="$3" driver="$4"; shift 4
ignore='[a-z_]*_s|gflops'
if [ "${1:-}" = "--more-tasks" ]; then ignore="$ignore|tasks"; shift; fi
case "$mpirun" in
  none) echo "stardiff-test-skipped: mpirun is absent (package openmpi-bin)"; exit 0 ;;
  nompi) echo "stardiff-test-skipped: stardiff was built without StarPU-MPI (starpumpi-1.3, MPI)"; exit 0 ;;
esac
[ -f "$matrix" ] || { echo "stardiff-test-skipped: $matrix is absent"; exit 0; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/stardiff-ldlt-mpi.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
STARDIFF_MPI=0 "$driver" "$matrix" "$@" --json --quiet > "$dir/one.json"
rc1=$?
"$mpirun" --allow-run-as-root --oversubscribe --bind-to none -np "$n" "$driver" "$matrix" "$@" --json --quiet \
  > "$dir/many.json"
rcn=$?
[ "$rc1" -le 1 ] || { echo "1-rank run failed (exit $rc1)"; exit 1; }
[ "$rcn" = "$rc1" ] || { echo "exit $rc1 on 1 rank, $rcn on $n ranks"; exit 1; }
lines=$(wc -l < "$dir/many.json")
[ "$lines" -eq 1 ] || { echo "$n-rank stdout has $lines lines (rank 0's JSON object expected):"; cat "$dir/many.json"; exit 1; }
# one "key": value per line, the ignored keys dropped
split() { sed -e 's/^{//' -e 's/}$//' -e 's/,"/\n"/g' "$1" | grep -Ev "^\"($ignore)\":" ; }
split "$dir/one.json" > "$dir/one.fields"
split "$dir/many.json" > "$dir/many.fields"
if ! cmp -s "$dir/one.fields" "$dir/many.fields"; then
  echo "reports differ (1 rank < >  $n ranks):"; diff "$dir/one.fields" "$dir/many.fields"; exit 1
fi
echo "same report on 1 and $n ranks (exit $rc1): $(grep -E '^"(inertia|pivoting|relres|backward_error|tasks)"' "$dir/one.fields" | tr '\n' ' ')"
