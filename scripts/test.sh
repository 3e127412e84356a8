#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# scripts/test.sh — fresh Debian machine to a full test run: installs dependencies,
# builds (build/) and runs the whole ctest suite (label mpi included: StarPU-MPI runs under
# mpirun -np 2/3 on loopback, skipped without mpirun or StarPU-MPI); then the sanitizer build
# (build-asan/, -fsanitize=address,undefined) over the unit and starpu labels; then
# a CUDA-enabled StarPU (scripts/build-starpu-cuda.sh, into $STARPU_CUDA_PREFIX, default
# ~/.local/starpu-cuda, kept between runs on the same machine) and build-cuda/ against it
# (every StarPU CUDA codelet compiled and linked) over the unit, starpu and cuda labels
# with STARPU_NCUDA=0 (the cuda tests skip without a device; the step is one skip
# without nvcc); then installs the package and builds and runs an out-of-tree consumer against it.
# Exit status: non-zero if any step fails. The last line is always
# `stardiff: N passed, F failed, M skipped`, summed over the ctest runs (ctest's
# "Skipped" tests, e.g. those reading ../shared/data when it is absent, count as
# skipped, not passed) and the two consumer builds.
set -euo pipefail
source "$(dirname "$0")/common.sh"
"$ROOT/scripts/install-deps.sh"

PASSED=0 FAILED=0 SKIPPED=0
summary() { echo "stardiff: $PASSED passed, $FAILED failed, $SKIPPED skipped"; }
trap 'rc=$?; [ "$rc" -eq 0 ] || { echo "test.sh: a step failed (exit $rc)"; summary; }' EXIT
run_ctest() {  # run_ctest LOG ctest-args... : runs ctest, adds its counts; returns ctest's status
  local log="$1"; shift
  local rc=0 total failed skipped
  ctest "$@" 2>&1 | tee "$log" || rc=$?
  total=$(grep -oE "tests? failed out of [0-9]+" "$log" | grep -oE "[0-9]+$" | tail -n 1 || true)
  failed=$(grep -oE "[0-9]+ tests? failed out of" "$log" | grep -oE "^[0-9]+" | tail -n 1 || true)
  skipped=$(grep -cE "^[[:space:]]+[0-9]+ - .* \(Skipped\)$" "$log" || true)
  total=${total:-0} failed=${failed:-0} skipped=${skipped:-0}
  [ "$rc" -eq 0 ] || [ "$failed" -gt 0 ] || failed=1  # ctest failed without a count
  local passed=$((total - failed - skipped))
  [ "$passed" -ge 0 ] || passed=0
  PASSED=$((PASSED + passed))
  FAILED=$((FAILED + failed))
  SKIPPED=$((SKIPPED + skipped))
  return "$rc"
}

echo "== Release build and full test suite"
mkdir -p "$ROOT/build"
configure_and_build "$ROOT/build"
run_ctest "$ROOT/build/ctest.log" --test-dir "$ROOT/build" --output-on-failure -j "$JOBS" --timeout 1200

echo "== AddressSanitizer + UBSan build: unit and starpu labels"
mkdir -p "$ROOT/build-asan"
configure_and_build "$ROOT/build-asan" -DSTARDIFF_SANITIZE=ON -DSTARDIFF_BUILD_APPS=OFF \
  -DSTARDIFF_BUILD_BENCH=OFF -DSTARDIFF_WITH_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
run_ctest "$ROOT/build-asan/ctest.log" --test-dir "$ROOT/build-asan" --output-on-failure -j "$JOBS" \
  -L 'unit|starpu' --timeout 1200

echo "== CUDA-enabled StarPU build: unit, starpu and cuda labels on CPU workers (STARPU_NCUDA=0)"
CUDA_DIR="${CUDA_DIR:-/usr/local/cuda}"
STARPU_CUDA_PREFIX="${STARPU_CUDA_PREFIX:-$HOME/.local/starpu-cuda}"
if [ -x "$CUDA_DIR/bin/nvcc" ]; then
  # Idempotent: a prefix kept from an earlier run (same machine) is reused as is.
  CUDA_DIR="$CUDA_DIR" "$ROOT/scripts/build-starpu-cuda.sh" "$STARPU_CUDA_PREFIX"
  mkdir -p "$ROOT/build-cuda"
  PKG_CONFIG_PATH="$STARPU_CUDA_PREFIX/lib/pkgconfig" configure_and_build "$ROOT/build-cuda" \
    -DSTARDIFF_WITH_CUDA=ON -DCMAKE_CUDA_COMPILER="$CUDA_DIR/bin/nvcc" \
    -DSTARDIFF_BUILD_APPS=OFF -DSTARDIFF_BUILD_BENCH=OFF
  grep -q "StarPU CUDA codelets ON" "$ROOT/build-cuda.configure.log" \
    || { echo "test.sh: build-cuda is not on a CUDA-enabled StarPU"; exit 1; }
  STARPU_NCUDA=0 STARPU_HOME="$ROOT/build-cuda/starpu_home" run_ctest "$ROOT/build-cuda/ctest.log" \
    --test-dir "$ROOT/build-cuda" --output-on-failure -j "$JOBS" -L 'unit|starpu|cuda' --timeout 1200
else
  echo "skipped: no nvcc at $CUDA_DIR/bin/nvcc (set CUDA_DIR)"
  SKIPPED=$((SKIPPED + 1))
fi

echo "== install and out-of-tree consumer (find_package and pkg-config)"
STAGE="$ROOT/build/stage"
rm -rf "$STAGE" "$ROOT/build/consumer"
cmake --install "$ROOT/build" --prefix "$STAGE" >/dev/null
cmake -S "$ROOT/tests/consumer" -B "$ROOT/build/consumer" -DCMAKE_PREFIX_PATH="$STAGE" >/dev/null
cmake --build "$ROOT/build/consumer" -j "$JOBS" >/dev/null
LD_LIBRARY_PATH="$STAGE/lib:${LD_LIBRARY_PATH:-}" "$ROOT/build/consumer/consumer"
PKG_CONFIG_PATH="$STAGE/lib/pkgconfig" g++ -std=c++20 "$ROOT/tests/consumer/consumer.cpp" \
  $(PKG_CONFIG_PATH="$STAGE/lib/pkgconfig" pkg-config --cflags --libs stardiff) -o "$ROOT/build/consumer/consumer_pc"
LD_LIBRARY_PATH="$STAGE/lib:${LD_LIBRARY_PATH:-}" "$ROOT/build/consumer/consumer_pc"
PASSED=$((PASSED + 2))  # the consumer through find_package and through pkg-config
echo "test.sh: all steps passed"
summary
