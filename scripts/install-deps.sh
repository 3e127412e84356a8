#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# scripts/install-deps.sh — installs the Debian packages stardiff's build, tests and
# benchmarks need. Idempotent; prints nothing when everything is already installed.
# The CUDA toolkit (nvcc) is not a Debian package here: CUDA kernels build when
# /usr/local/cuda/bin/nvcc (or nvcc on PATH) exists, and are skipped otherwise.
# libquantlib0-dev: QuantLib, the peer and oracle of apps/cde and bench/cde_vs_quantlib.
# python3-matplotlib (scripts/plot-bench.py) is optional and not installed here: it pulls
# in about 47 packages (scipy, sympy, Boost headers; ~345 MiB); the plot_bench test skips
# without it.
set -euo pipefail
PACKAGES=(
  cmake g++ make pkg-config ccache python3
  libstarpu-dev libhwloc-dev libopenmpi-dev openmpi-bin gfortran
  libopenblas-dev liblapacke-dev libmetis-dev libsuitesparse-dev libmumps-seq-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libquantlib0-dev
)
missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
