# SPDX-License-Identifier: LGPL-2.1-or-later
# scripts/common.sh — shared settings for the scripts (sourced, not run).
# Build directories live in the repository root: build/ (Release), build-asan/.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOBS="${JOBS:-$(nproc)}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
# Perf models and StarPU's per-user files go to the build tree, not $HOME/.starpu.
export STARPU_HOME="${STARPU_HOME:-$ROOT/build/starpu_home}"
export STARPU_SILENT="${STARPU_SILENT:-1}"
# Debian's OpenBLAS 0.3.21 does not recognise recent Xeons and falls back to its
# Prescott kernels (dgemm ~4x slower); name the core type from the CPU flags.
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
  if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then export OPENBLAS_CORETYPE=SkylakeX
  elif grep -qw avx2 /proc/cpuinfo 2>/dev/null; then export OPENBLAS_CORETYPE=Haswell
  fi
fi

configure_and_build() {  # configure_and_build DIR [cmake args...]
  local dir="$1"; shift
  cmake -S "$ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >"$dir.configure.log" 2>&1 \
    || { cat "$dir.configure.log"; return 1; }
  grep -E "^-- (stardiff|  )" "$dir.configure.log" || true
  cmake --build "$dir" -j "$JOBS"
}
