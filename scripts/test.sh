#!/usr/bin/env bash
# scripts/test.sh — fresh Debian machine to a full test run: installs dependencies,
# builds (build/) and runs the whole ctest suite; then the sanitizer build
# (build-asan/, -fsanitize=address,undefined) over the unit and starpu labels; then
# installs the package and builds and runs an out-of-tree consumer against it.
# Exit status: non-zero if any step fails. Tests reading ../shared/data skip cleanly
# when it is absent.
set -euo pipefail
source "$(dirname "$0")/common.sh"
"$ROOT/scripts/install-deps.sh"

PASSED=0
run_ctest() {  # run_ctest LOG ctest-args... : runs ctest, adds its count to PASSED
  local log="$1"; shift
  ctest "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || return "$rc"
  local n
  n=$(grep -oE "tests failed out of [0-9]+" "$log" | grep -oE "[0-9]+$" || echo 0)
  PASSED=$((PASSED + n))
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
echo "stardiff: $PASSED passed, 0 failed"
