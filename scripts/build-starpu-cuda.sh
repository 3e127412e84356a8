#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# scripts/build-starpu-cuda.sh [PREFIX] — builds a CUDA-enabled StarPU into PREFIX
# (default $HOME/.local/starpu-cuda) from Debian bookworm's own `starpu` 1.3.10 source
# package, patched for CUDA 13. Contract:
#   - Idempotent: exits 0 at once when PREFIX already holds a StarPU whose
#     starpu_config.h defines STARPU_USE_CUDA.
#   - Gets the source with `apt-get source starpu` only: it enables deb-src for the
#     duration of the run by copying the system's existing apt source definitions into a
#     file of its own (removed on exit), and installs only what the build needs
#     (dpkg-dev, compilers, pkg-config, libhwloc-dev). Needs root or sudo for apt.
#   - Lean build: CPU + CUDA workers only (no OpenCL, MPI, FFT, Fortran, docs, examples,
#     tests), STARPU_MAXCPUS 64, shared libraries only. Compiles under `nice -n 10`.
#   - CUDA from $CUDA_DIR (default /usr/local/cuda). Afterwards configure stardiff with
#       PKG_CONFIG_PATH=PREFIX/lib/pkgconfig cmake -S . -B build-cuda
# Environment: CUDA_DIR, JOBS (default nproc), KEEP_SRC=1 keeps the build directory
# (always kept, with its logs, when the build fails).
set -euo pipefail

PREFIX="${1:-$HOME/.local/starpu-cuda}"
CUDA_DIR="${CUDA_DIR:-/usr/local/cuda}"
JOBS="${JOBS:-$(nproc)}"
STARPU_CFG="$PREFIX/include/starpu/1.3/starpu_config.h"

log() { echo "build-starpu-cuda: $*" >&2; }
die() { log "error: $*"; exit 1; }

if [ -f "$STARPU_CFG" ] && grep -q '^#define STARPU_USE_CUDA\b' "$STARPU_CFG" \
   && [ -f "$PREFIX/lib/pkgconfig/starpu-1.3.pc" ]; then
  log "CUDA-enabled StarPU already in $PREFIX"
  exit 0
fi
[ -x "$CUDA_DIR/bin/nvcc" ] || die "no nvcc at $CUDA_DIR/bin/nvcc (set CUDA_DIR)"
PREFIX="$(mkdir -p "$PREFIX" && cd "$PREFIX" && pwd)"

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
START=$(date +%s)

WORK="$(mktemp -d "${TMPDIR:-/tmp}/starpu-cuda.XXXXXX")"
chmod 755 "$WORK"  # apt's _apt user must be able to write the downloaded files here
SRC_LIST=/etc/apt/sources.list.d/stardiff-starpu-deb-src.sources
CREATED_LIST=0
cleanup() {
  local rc=$?
  if [ "$CREATED_LIST" = 1 ]; then $SUDO rm -f "$SRC_LIST"; fi
  if [ "${KEEP_SRC:-0}" = 1 ] || [ "$rc" -ne 0 ]; then
    log "build directory kept: $WORK"
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT

# 1. Source package: enable deb-src unless apt already knows the source.
if ! apt-cache showsrc starpu 2>/dev/null | grep -q '^Package: starpu$'; then
  tmp_list="$WORK/deb-src.sources"
  : >"$tmp_list"
  for f in /etc/apt/sources.list.d/*.sources; do  # deb822 files
    [ -f "$f" ] && [ "$f" != "$SRC_LIST" ] || continue
    sed -E 's/^Types:.*/Types: deb-src/' "$f" >>"$tmp_list"
    echo >>"$tmp_list"
  done
  one_line="$( { cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true; } \
    | sed -nE 's/^[[:space:]]*deb[[:space:]]+/deb-src /p')"
  if [ -n "$one_line" ]; then  # one-line entries, rewritten as deb822 stanzas
    while read -r _ rest; do
      opts=""
      if [[ "$rest" == \[* ]]; then opts="${rest%%]*}"; opts="${opts#[}"; rest="${rest#*] }"; fi
      read -r uri suite comps <<<"$rest"
      {
        echo "Types: deb-src"; echo "URIs: $uri"; echo "Suites: $suite"
        echo "Components: $comps"
        for o in $opts; do
          case "$o" in signed-by=*) echo "Signed-By: ${o#signed-by=}";; esac
        done
        echo
      } >>"$tmp_list"
    done <<<"$one_line"
  fi
  grep -q '^Types: deb-src' "$tmp_list" || die "no apt source definitions to copy"
  $SUDO cp "$tmp_list" "$SRC_LIST"
  CREATED_LIST=1
  log "enabled deb-src in $SRC_LIST (removed on exit); apt-get update"
  $SUDO apt-get update -qq
fi

NEED=(dpkg-dev xz-utils gcc g++ make pkg-config libhwloc-dev)
missing=()
for p in "${NEED[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  [ "$CREATED_LIST" = 1 ] || $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cd "$WORK"
log "apt-get source starpu in $WORK"
apt-get source -qq starpu >source.log 2>&1 || { cat source.log; die "apt-get source failed"; }
SRCDIR="$(find "$WORK" -maxdepth 1 -type d -name 'starpu-1.3*' | head -n1)"
[ -n "$SRCDIR" ] || die "no starpu-1.3* directory after apt-get source"
cd "$SRCDIR"
log "source: $(basename "$SRCDIR")"

# 2. CUDA 13 compatibility fixes.
# (a) cudaDeviceProp::computeMode is gone: ask cudaDeviceGetAttribute instead.
perl -0pi -e 's/\b\w+\[(\w+)\]\.computeMode\b/({ int starpu_cm_ = 0; cudaDeviceGetAttribute(&starpu_cm_, cudaDevAttrComputeMode, $1); starpu_cm_; })/g' \
  src/drivers/cuda/driver_cuda.c
# (b) cublas.h (legacy API) may not be included together with cublas_v2.h: drop it from
#     starpu_cublas.c (starpu_cublas_v2.h brings cublas_v2.h) and make driver_cuda.h
#     include cublas_v2.h instead (driver_cuda.c still needs the CUBLAS_STATUS_* enums).
perl -pi -e 's{^\s*#\s*include\s*<cublas\.h>\s*\n}{}' src/drivers/cuda/starpu_cublas.c
perl -pi -e 's{^(\s*#\s*include\s*)<cublas\.h>}{$1<cublas_v2.h>}' src/drivers/cuda/driver_cuda.h
# (c) drop the legacy cublasInit/cublasShutdown calls; the v2 handles StarPU creates per
#     worker already carry the stream, and the legacy cublasSetKernelStream becomes
#     cublasSetStream on the worker's v2 handle.
perl -0pi -e '
  s/cublasStatus\s+(\w+)\s*=\s*cublasInit\s*\(\s*\)\s*;\s*if\s*\(\s*STARPU_UNLIKELY\s*\(\s*\1\s*\)\s*\)\s*STARPU_CUBLAS_REPORT_ERROR\s*\(\s*\1\s*\)\s*;/\/* legacy CUBLAS init dropped for CUDA 13 *\//g;
  s/cublasShutdown\s*\(\s*\)\s*;/; \/* legacy CUBLAS shutdown dropped for CUDA 13 *\//g;
  s/cublasSetKernelStream\s*\(\s*starpu_cuda_get_local_stream\s*\(\s*\)\s*\)\s*;/cublasSetStream(starpu_cublas_get_local_handle(), starpu_cuda_get_local_stream());/g;
' src/drivers/cuda/starpu_cublas.c
if grep -nE 'computeMode|cublasInit|cublasShutdown|cublasSetKernelStream|<cublas\.h>' \
     src/drivers/cuda/driver_cuda.c src/drivers/cuda/driver_cuda.h src/drivers/cuda/starpu_cublas.c \
   || ! grep -q '<cublas_v2\.h>' src/drivers/cuda/driver_cuda.h; then
  die "CUDA 13 fixes did not apply cleanly to this source (lines above)"
fi

# 3. Configure a lean build, make, install.
CUDA_LIB="$CUDA_DIR/lib64"; [ -d "$CUDA_LIB" ] || CUDA_LIB="$CUDA_DIR/lib"
mkdir -p build && cd build
# (Not --disable-sc-hypervisor: 1.3.10's configure.ac turns any --*-sc-hypervisor into
# "yes", and the hypervisor then fails to build for want of uthash.h. Its default is off.)
log "configure (log: $PWD/configure.log)"
if ! nice -n 10 ../configure --prefix="$PREFIX" \
    --enable-cuda --with-cuda-dir="$CUDA_DIR" --enable-maxcpus=64 \
    --disable-opencl --disable-starpufft --disable-mpi --disable-fortran \
    --disable-build-doc --disable-build-examples --disable-build-tests \
    --disable-socl --disable-starpurm --disable-openmp \
    --disable-opengl-render --disable-glpk --disable-hdf5 --disable-leveldb \
    --disable-mlr --disable-valgrind --disable-static --without-x --without-fxt \
    --enable-blas-lib=none --disable-dependency-tracking \
    LDFLAGS="-Wl,-rpath,$CUDA_LIB ${LDFLAGS:-}" >configure.log 2>&1; then
  tail -n 40 configure.log; die "configure failed"
fi
grep -q '^#define STARPU_USE_CUDA\b' include/starpu_config.h \
  || { grep -iE 'cuda' configure.log | tail -n 30; die "configure did not enable CUDA"; }
log "make -j$JOBS (log: $PWD/make.log)"
nice -n 10 make -j"$JOBS" >make.log 2>&1 \
  || { grep -E 'error:|\*\*\*' make.log | head -n 40; die "make failed"; }
# install-strip: without debug info the install is a few MB instead of 15.
make install-strip >install.log 2>&1 || { tail -n 40 install.log; die "make install failed"; }
grep -q '^#define STARPU_USE_CUDA\b' "$STARPU_CFG" || die "installed starpu_config.h lacks STARPU_USE_CUDA"

log "installed in $PREFIX ($(du -sh "$PREFIX" | cut -f1)) in $(( $(date +%s) - START )) s"
log "use: PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig cmake -S . -B build-cuda"
