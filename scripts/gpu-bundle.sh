#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# scripts/gpu-bundle.sh [BUILD_DIR] — packs what scripts/gpu-check.sh runs on a bare x86-64
# machine that has only the CUDA 13 driver and toolkit. Contract:
#   - Input: a CUDA build of stardiff in BUILD_DIR (default build-cuda, configured against the
#     StarPU of scripts/build-starpu-cuda.sh, see README "GPU check"); the binaries it needs
#     are built here (cmake --build BUILD_DIR --target ...) when missing.
#   - Output: gpu-bundle/stardiff-gpu.tar.gz (ignored by git, at most 60 MiB, else exit 1)
#     holding bin/ (every tests/cuda binary, stardiff-info, -ldlt, -poisson, -pf), lib/ (the
#     CUDA StarPU, libstardiff and every shared library ldd names that the target lacks:
#     hwloc, METIS, SuiteSparse, OpenBLAS, LAPACK(E), gfortran, libgomp, libstdc++, libgcc_s,
#     cudart, ...), data/ (the shared matrices and case the check uses) and MANIFEST (with
#     the newest glibc symbol version needed, with and without the bundled libstdc++).
#     Left out: glibc's own libraries (libc, libm, ld-linux, ...), the driver's
#     libcuda/libnvidia-*, and the toolkit's large libraries (cuBLAS, cuBLASLt,
#     cuSOLVER, cuSPARSE, nvJitLink...): the RUNPATH of every object is
#     $ORIGIN(/../lib) first, then /usr/local/cuda/lib64 and the toolkit's targets dir.
#   - Self-check: every bundled object is resolved by ldd under `env -i` with nothing but
#     the bundle and glibc (the toolkit libraries excepted, from /usr/local/cuda), and each
#     binary runs `--help` (tests: --gtest_list_tests) from the unpacked tarball. Exit 1 on
#     any unresolved library.
# Environment: BUNDLE_MAX_MIB (default 60), SHARED_DATA (default ../shared/data), JOBS.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "$ROOT" && realpath -m "${1:-build-cuda}")"
MAX_MIB="${BUNDLE_MAX_MIB:-60}"
OUTDIR="$ROOT/gpu-bundle"
STAGE="$BUILD/gpu-bundle-stage"
log() { echo "gpu-bundle: $*" >&2; }
die() { log "error: $*"; exit 1; }

command -v patchelf >/dev/null || die "patchelf not found (Debian package patchelf)"
[ -f "$BUILD/CMakeCache.txt" ] || die "no CMake build in $BUILD (see README \"GPU check\")"
[ -d "$BUILD/tests" ] || die "$BUILD was configured without tests (STARDIFF_BUILD_TESTS=ON needed)"

TESTS=()
for src in "$ROOT"/tests/cuda/*.cpp "$ROOT"/tests/cuda/*.cu; do  # .cu: par_loop from nvcc TUs
  [ -e "$src" ] || continue
  n="$(basename "$src")"; TESTS+=("${n%.*}")
done
DRIVERS=(stardiff-info stardiff-ldlt stardiff-poisson stardiff-pf)
cmake --build "$BUILD" -j "${JOBS:-$(nproc)}" --target "${TESTS[@]}" "${DRIVERS[@]}" >&2 \
  || die "build of ${TESTS[*]} ${DRIVERS[*]} failed"

find_bin() {  # find_bin NAME: the built executable NAME under $BUILD
  local f
  f="$(find "$BUILD" -type f -name "$1" -perm -u+x -not -path '*/CMakeFiles/*' -not -path "$STAGE/*" | head -n1)"
  [ -n "$f" ] || die "no built $1 under $BUILD"
  echo "$f"
}

ARCHS="$(grep -m1 '^CMAKE_CUDA_ARCHITECTURES:' "$BUILD/CMakeCache.txt" | cut -d= -f2)"
case ";$ARCHS;" in
  *";90;"*|*";90-real;"*|*";90a;"*) ;;
  *) log "warning: CMAKE_CUDA_ARCHITECTURES=$ARCHS has no 90: an H100/H200 JIT-compiles the PTX (reconfigure with -DCMAKE_CUDA_ARCHITECTURES=90)";;
esac

rm -rf "$STAGE"; mkdir -p "$STAGE/bin" "$STAGE/lib"
for t in "${TESTS[@]}" "${DRIVERS[@]}"; do cp -L "$(find_bin "$t")" "$STAGE/bin/"; done
# The inputs of gpu-check.sh from ../shared/data (the device machine may not have it).
SHARED="${SHARED_DATA:-$ROOT/../shared/data}"
mkdir -p "$STAGE/data/matrices" "$STAGE/data/matpower"
for f in matrices/s3rmt3m3.mtx.gz matrices/aug3dcqp.mtx.gz matpower/case9241pegase.m \
         matpower/case9241pegase.batch1000; do
  if [ -f "$SHARED/$f" ]; then cp -L "$SHARED/$f" "$STAGE/data/$f"
  else log "note: no $SHARED/$f (the check skips what needs it)"; fi
done

# Libraries the target has (or must come from its driver/toolkit): not bundled.
skip_lib() {
  case "$1" in
    libc.so*|libm.so*|libmvec.so*|libdl.so*|libpthread.so*|librt.so*|libresolv.so*|libutil.so*|\
    ld-linux*|linux-vdso*|libanl.so*|libnsl.so*) return 0;;           # glibc
    libcuda.so*|libnvidia-*|libnvcuvid*|libcudadebugger*) return 0;;  # the driver
    libcublas.so*|libcublasLt.so*|libcusolver*|libcusparse.so*|libcufft*|libcurand*|\
    libnvJitLink*|libnvrtc*|libnpp*|libnvjpeg*) return 0;;            # the toolkit (large)
  esac
  return 1
}

declare -A SEEN=()
queue=("$STAGE"/bin/*)
while [ ${#queue[@]} -gt 0 ]; do
  obj="${queue[0]}"; queue=("${queue[@]:1}")
  while read -r name path; do
    [ -n "$name" ] || continue
    skip_lib "$name" && continue
    [ -n "${SEEN[$name]:-}" ] && continue
    [ -f "$path" ] || die "$(basename "$obj") needs $name, which ldd does not find here"
    SEEN[$name]=1
    cp -L "$path" "$STAGE/lib/$name"
    chmod u+w "$STAGE/lib/$name"
    queue+=("$STAGE/lib/$name")
  done < <(ldd "$obj" | awk '/=>/ { print $1, $3 }')
done

# The StarPU the binaries load must be the CUDA one (not Debian's, same soname).
sp="$(ls "$STAGE"/lib/libstarpu-1.*.so.* 2>/dev/null | head -n1)"
[ -n "$sp" ] || die "the binaries load no libstarpu"
ldd "$sp" | grep -q 'libcudart' || die "$(basename "$sp") has no CUDA: $BUILD was configured against a StarPU without CUDA"

CUDA_RP="/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib"
# Strip first: patchelf's rewrite is the last edit of every object.
strip --strip-unneeded "$STAGE"/bin/* "$STAGE"/lib/* 2>/dev/null || true
for f in "$STAGE"/bin/*; do patchelf --set-rpath "\$ORIGIN/../lib:$CUDA_RP" "$f"; done
for f in "$STAGE"/lib/*; do patchelf --set-rpath "\$ORIGIN:$CUDA_RP" "$f"; done

glibc_need() {  # the newest GLIBC_x.y symbol version the given objects need
  for f in "$@"; do objdump -T "$f" 2>/dev/null | grep -o 'GLIBC_[0-9][0-9.]*' ; done \
    | sed 's/GLIBC_//' | sort -uV | tail -n1
}
command -v objdump >/dev/null || die "objdump not found (binutils)"
core=()
for f in "$STAGE"/bin/* "$STAGE"/lib/*; do
  case "$(basename "$f")" in libstdc++.so*|libgcc_s.so*) ;; *) core+=("$f");; esac
done
{
  echo "stardiff GPU bundle, built $(date -u +%Y-%m-%dT%H:%MZ) from $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "build dir: $BUILD"
  echo "StarPU: $(grep -m1 '^STARPU_VERSION:' "$BUILD/CMakeCache.txt" | cut -d= -f2) in $(grep -m1 '^STARPU_LIBDIR:' "$BUILD/CMakeCache.txt" | cut -d= -f2)"
  echo "CUDA architectures: $ARCHS"
  echo "glibc needed (all): $(glibc_need "$STAGE"/bin/* "$STAGE"/lib/*)"
  echo "glibc needed (without libstdc++, libgcc_s): $(glibc_need "${core[@]}")"
  echo "not bundled (from the target's driver/toolkit):"
  for f in "$STAGE"/bin/* "$STAGE"/lib/*; do
    ldd "$f" | awk '/=>/ { print "  " $1 }'
  done | sort -u | while read -r n; do if skip_lib "$n"; then echo "  $n"; fi; done
  echo "files:"
  (cd "$STAGE" && find bin lib data -type f -printf '  %p %s\n' | sort)
} >"$STAGE/MANIFEST"

# Self-check in a clean environment: nothing unresolved but what the target toolkit gives.
bad=0
for f in "$STAGE"/bin/* "$STAGE"/lib/*; do
  while read -r line; do
    n="${line%% *}"
    skip_lib "$n" && continue
    log "unresolved in $(basename "$f"): $line"; bad=1
  done < <(env -i /usr/bin/ldd "$f" | awk '/not found/ { print $1 " not found" }')
  while read -r n p; do
    skip_lib "$n" && continue
    p="$(realpath -m "$p")"
    case "$p" in "$STAGE"/lib/*) ;; *) log "$(basename "$f"): $n resolved outside the bundle ($p)"; bad=1;; esac
  done < <(env -i /usr/bin/ldd "$f" | awk '/=>/ && !/not found/ { print $1, $3 }')
done
[ "$bad" = 0 ] || die "the bundle does not resolve its own libraries (above)"

mkdir -p "$OUTDIR"
tar -C "$STAGE" -czf "$OUTDIR/stardiff-gpu.tar.gz.part" bin lib data MANIFEST
mv "$OUTDIR/stardiff-gpu.tar.gz.part" "$OUTDIR/stardiff-gpu.tar.gz"
size=$(stat -c %s "$OUTDIR/stardiff-gpu.tar.gz")
mib=$(( (size + 1048575) / 1048576 ))
[ "$mib" -le "$MAX_MIB" ] || die "bundle is $mib MiB > $MAX_MIB MiB"

# The unpacked tarball runs in a clean environment.
check="$(mktemp -d "${TMPDIR:-/tmp}/gpu-bundle-check.XXXXXX")"
trap 'rm -rf "$check"' EXIT
tar -C "$check" -xzf "$OUTDIR/stardiff-gpu.tar.gz"
for t in "${TESTS[@]}"; do
  env -i HOME="$check" "$check/bin/$t" --gtest_list_tests >/dev/null || die "$t --gtest_list_tests failed from the bundle"
done
for d in "${DRIVERS[@]}"; do
  env -i HOME="$check" "$check/bin/$d" --help >/dev/null 2>&1 || die "$d --help failed from the bundle"
done
log "ok: $OUTDIR/stardiff-gpu.tar.gz ($mib MiB, $(ls "$STAGE/lib" | wc -l) libraries, ${#TESTS[@]} tests, ${#DRIVERS[@]} drivers)"
