#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/mpi/same_result.sh — a driver's result on 1 rank and under mpirun on N ranks, bitwise.
# Usage: same_result.sh MPIRUN NRANKS [--no-vtk] [--ignore KEY]... DRIVER ARGS... — runs DRIVER ARGS --json
# --vtk F (without --vtk F after --no-vtk, for drivers without it) once without mpirun (no MPI) and once as `MPIRUN --allow-run-as-root --oversubscribe
# --bind-to none -np NRANKS DRIVER ARGS --json --vtk F`; fails unless both exit 0, the N-rank
# stdout is exactly one line (rank 0's JSON object), both JSON objects are equal once their
# timing fields (*_s, *factor) and every --ignore KEY (a scalar field, e.g. tiles where the
# default tiling depends on the ranks) are removed, and both VTK files (every field, %.17g) are
# identical. MPIRUN "none" or "nompi": prints stardiff-test-skipped (mpirun or StarPU-MPI absent).
set -u
mpirun="$1" n="$2"; shift 2
vtk=1
ignore=""
while :; do
  case "${1:-}" in
    --no-vtk) vtk=0; shift ;;
    --ignore) ignore="$ignore|$2"; shift 2 ;;
    *) break ;;
  esac
done
case "$mpirun" in
  none) echo "stardiff-test-skipped: mpirun is absent (package openmpi-bin)"; exit 0 ;;
  nompi) echo "stardiff-test-skipped: stardiff was built without StarPU-MPI (starpumpi-1.3, MPI)"; exit 0 ;;
esac
dir=$(mktemp -d "${TMPDIR:-/tmp}/stardiff-mpi.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
keys="[a-z_]*(_s|factor)"
[ -n "$ignore" ] && keys="($keys|${ignore#|})"
strip() { sed -E "s/\"$keys\":[^,}]*,?//g" "$1"; }
vtk_one="" vtk_many=""
if [ "$vtk" = 1 ]; then vtk_one="--vtk $dir/one.vtk" vtk_many="--vtk $dir/many.vtk"; fi
# shellcheck disable=SC2086  # the vtk options split into two words (mktemp: no spaces)
STARDIFF_MPI=0 "$@" --json $vtk_one > "$dir/one.json" || { echo "1-rank run failed"; exit 1; }
# shellcheck disable=SC2086
"$mpirun" --allow-run-as-root --oversubscribe --bind-to none -np "$n" "$@" --json $vtk_many \
  > "$dir/many.json" || { echo "$n-rank run failed"; exit 1; }
lines=$(wc -l < "$dir/many.json")
[ "$lines" -eq 1 ] || { echo "$n-rank stdout has $lines lines (rank 0's JSON object expected):"; cat "$dir/many.json"; exit 1; }
strip "$dir/one.json" > "$dir/one.stripped"
strip "$dir/many.json" > "$dir/many.stripped"
echo "1 rank:  $(cat "$dir/one.stripped")"
echo "$n ranks: $(cat "$dir/many.stripped")"
cmp -s "$dir/one.stripped" "$dir/many.stripped" || { echo "JSON differs"; exit 1; }
if [ "$vtk" = 1 ]; then
  cmp "$dir/one.vtk" "$dir/many.vtk" || { echo "VTK fields differ"; exit 1; }
  echo "same result on 1 and $n ranks ($(grep -c '^SCALARS' "$dir/one.vtk") fields of $(grep '^POINT_DATA' "$dir/one.vtk"))"
else
  echo "same result on 1 and $n ranks"
fi
