#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# scripts/gpu-check.sh — the device check (issue 21), run from the repository root of a bare
# x86-64 machine with the CUDA 13 driver and toolkit and the bundle of scripts/gpu-bundle.sh
# (gpu-bundle/stardiff-gpu.tar.gz, or GPU_BUNDLE=FILE). Contract:
#   1. prints nvidia-smi and stardiff-info's StarPU workers under STARPU_NCUDA=1 (and
#      under STARPU_NCUDA = devices + 1: it must neither hang nor crash);
#   2. runs every bundled tests/cuda binary (STARDIFF_SHARED_DATA = the bundle's data/):
#      PASS (0), SKIP (77) or FAIL (anything else; a SKIP while a device is present is a
#      FAIL: the test could not see it);
#   3. with STARPU_NCUDA=1, then STARPU_NCUDA=0: stardiff-ldlt on the 7-point 3-D Laplacian
#      (N^3, N = GPU_CHECK_LAPLACIAN_N, default 60, generated here) and on two shared
#      matrices, stardiff-poisson N x N (GPU_CHECK_POISSON_N, default 8192) primal and
#      adjoint, stardiff-pf on case9241pegase (Newton), and its --batch of 1000 scenarios
#      (LDL^T: the split fronts of order >= STARDIFF_LDLT_CUDA_MIN, default 2048, update on
#      the GPU where dmda sends them; the Laplacian's large fronts are such fronts)
#      when the driver has --batch; the two runs of a step must agree (LDL^T inertia, the
#      Poisson E to 1e-12, the power-flow iteration count);
#   4. prints one table: the time of each step (JSON key named in the table) under each
#      setting and the ratio GPU/CPU (< 1: the GPU run is faster). The settings alternate
#      (1, 0, 1, 0, ...) GPU_CHECK_REPEATS times (default 2; StarPU calibrates its perf
#      models in the first runs) and the table holds the last run of each (a repeat the
#      budget leaves no time for keeps the earlier figure and is no failure).
#   Without a device the NCUDA=1 runs are skipped with one line saying so, and the NCUDA=0
#   runs still run. Everything fits in GPU_CHECK_BUDGET_S (default 480 s): each step runs
#   under `timeout` with at most what is left (per-step cap GPU_CHECK_STEP_S, default 120).
#   Output: stdout, and under $OUT (default gpu-bundle/out): check.txt (the whole report),
#   table.tsv (the table plus each run's wall time), logs/. Exit 0 when nothing failed,
#   1 otherwise (a skipped step is no failure), 2 when the bundle is missing or cannot run
#   here (no awk/tar/gzip/timeout, too old a glibc).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUNDLE="${GPU_BUNDLE:-$ROOT/gpu-bundle/stardiff-gpu.tar.gz}"
OUTD="${OUT:-$ROOT/gpu-bundle/out}"
BUDGET="${GPU_CHECK_BUDGET_S:-480}"
STEP_CAP="${GPU_CHECK_STEP_S:-120}"
LAP_N="${GPU_CHECK_LAPLACIAN_N:-60}"
POI_N="${GPU_CHECK_POISSON_N:-8192}"
REPEATS="${GPU_CHECK_REPEATS:-2}"
START=$(date +%s)

mkdir -p "$OUTD/logs"
say() { echo "gpu-check: $*"; }

main() {
for c in awk tar gzip timeout; do
  command -v "$c" >/dev/null || { say "error: this machine has no $c"; exit 2; }
done
[ -f "$BUNDLE" ] || { say "error: no bundle $BUNDLE (run scripts/gpu-bundle.sh on the build machine)"; exit 2; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
tar -C "$WORK" -xzf "$BUNDLE" || { say "error: cannot unpack $BUNDLE"; exit 2; }
# glibc: the bundle was built on Debian 12 (2.36). An older glibc (Ubuntu 22.04: 2.35) can
# still run it with this machine's own libstdc++/libgcc_s when the rest needs no more.
ver_ge() { [ "$(printf '%s\n' "$1" "$2" | sort -V | head -n1)" = "$2" ]; }
have="$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{ print $2 }')"
need_all="$(sed -n 's/^glibc needed (all): //p' "$WORK/MANIFEST")"
need_core="$(sed -n 's/^glibc needed (without libstdc++, libgcc_s): //p' "$WORK/MANIFEST")"
if [ -n "$have" ] && [ -n "$need_all" ] && ! ver_ge "$have" "$need_all"; then
  if [ -n "$need_core" ] && ver_ge "$have" "$need_core"; then
    say "glibc $have < $need_all (the bundled libstdc++'s): using this machine's libstdc++ and libgcc_s"
    rm -f "$WORK"/lib/libstdc++.so* "$WORK"/lib/libgcc_s.so*
  else
    say "error: the bundle needs glibc >= ${need_core:-$need_all}, this machine has $have"; exit 2
  fi
fi
BIN="$WORK/bin"
DATA="$WORK/data"
[ -d "$DATA" ] || DATA="$ROOT/../shared/data"
export STARPU_HOME="$WORK/starpu_home" STARPU_SILENT=1
# Debian's OpenBLAS 0.3.21 may not recognise the host CPU (see scripts/common.sh).
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
  if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then export OPENBLAS_CORETYPE=SkylakeX
  elif grep -qw avx2 /proc/cpuinfo 2>/dev/null; then export OPENBLAS_CORETYPE=Haswell
  fi
fi
# The toolkit's libraries (cuBLAS, cuSPARSE, ...) are not bundled: the RUNPATH names
# /usr/local/cuda; elsewhere find them next to nvcc.
if [ ! -e /usr/local/cuda/lib64/libcublas.so.13 ]; then
  for d in "$(dirname "$(command -v nvcc 2>/dev/null || echo /nonexistent/bin/nvcc)")/../lib64" \
           /usr/local/cuda-13*/lib64 /usr/local/cuda-13*/targets/x86_64-linux/lib; do
    if [ -e "$d/libcublas.so.13" ]; then export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; break; fi
  done
fi

FAILS=0
fail() { say "FAIL: $*"; FAILS=$((FAILS + 1)); }
left() { echo $((BUDGET - ($(date +%s) - START))); }
# run_step LOG CMD...: runs CMD under timeout (min of the step cap and the budget left),
# stdout to LOG.out, stderr to LOG.err; sets RC and WALL. RC=124: timed out; RC=125:
# not started (budget spent).
run_step() {
  local log="$1"; shift
  local lim; lim=$(left); lim=$((lim - 5))
  if [ "$lim" -lt 2 ]; then RC=125; WALL=0; : >"$log.out"; : >"$log.err"; say "budget spent: $(basename "$log") not run"; return; fi
  [ "$lim" -gt "$STEP_CAP" ] && lim=$STEP_CAP
  local t0 t1; t0=$(date +%s.%N)
  timeout -k 5 "$lim" "$@" >"$log.out" 2>"$log.err"; RC=$?
  t1=$(date +%s.%N); WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
  [ "$RC" = 124 ] || [ "$RC" = 137 ] && { RC=124; say "timed out after $lim s: $*"; }
  return 0
}
json_get() {  # json_get FILE KEY: the first value of "KEY": in FILE's one-line JSON
  grep -o "\"$2\":[^,}]*" "$1" 2>/dev/null | head -n1 | cut -d: -f2- | tr -d '"'
}

say "bundle $BUNDLE; $(sed -n 1p "$WORK/MANIFEST")"
say "host $(uname -n), $(nproc) CPUs, budget ${BUDGET}s"

# 1. The device.
HAVE_GPU=0; NGPU=0
echo "== nvidia-smi"
if command -v nvidia-smi >/dev/null; then
  timeout 30 nvidia-smi || true
  NGPU=$(timeout 30 nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  [ "${NGPU:-0}" -gt 0 ] && HAVE_GPU=1
else
  echo "(no nvidia-smi on this machine)"
fi
if [ "$HAVE_GPU" = 0 ]; then
  say "SKIP: no CUDA device here (nvidia-smi -L lists none): the STARPU_NCUDA=1 runs are skipped, the tests report SKIP"
fi
echo "== stardiff-info (STARPU_NCUDA=$HAVE_GPU)"
run_step "$OUTD/logs/info" env STARPU_NCUDA=$HAVE_GPU "$BIN/stardiff-info" --json
cat "$OUTD/logs/info.out"; grep -v '^$' "$OUTD/logs/info.err" | head -n 20
[ "$RC" = 0 ] || fail "stardiff-info exited $RC"
if [ "$HAVE_GPU" = 1 ] && ! grep -q '"cuda_workers":[1-9]' "$OUTD/logs/info.out"; then
  fail "StarPU started no CUDA worker under STARPU_NCUDA=1 (stardiff-info above)"
fi

if [ "$HAVE_GPU" = 1 ]; then  # bad input: more CUDA workers asked for than devices
  run_step "$OUTD/logs/info_ncuda_over" env STARPU_NCUDA=$((NGPU + 1)) STARPU_SILENT=0 "$BIN/stardiff-info" --json
  echo "STARPU_NCUDA=$((NGPU + 1)) with $NGPU device(s): exit $RC, $(grep -o '"cuda_workers":[0-9]*' "$OUTD/logs/info_ncuda_over.out"); stderr: $(grep -v '^$' "$OUTD/logs/info_ncuda_over.err" | head -n 3 | tr '\n' ' ')"
  if [ "$RC" = 124 ] || [ "$RC" -ge 128 ]; then fail "STARPU_NCUDA=$((NGPU + 1)): hang or crash (exit $RC)"; fi
fi

# 2. tests/cuda.
echo "== tests/cuda"
NT=0; NP=0; NS=0; NF=0
for t in "$BIN"/test_*; do
  n=$(basename "$t"); NT=$((NT + 1))
  run_step "$OUTD/logs/$n" env STARPU_NCUDA=1 STARDIFF_SHARED_DATA="$DATA" "$t"
  case "$RC" in
    0) NP=$((NP + 1)); echo "PASS  $n";;
    77) if [ "$HAVE_GPU" = 1 ]; then NF=$((NF + 1)); fail "$n skipped although a device is present:"
          grep -m3 -i 'skip' "$OUTD/logs/$n.out"
        else NS=$((NS + 1)); echo "SKIP  $n ($(grep -m1 -o 'no CUDA device[^"]*' "$OUTD/logs/$n.out" || echo skipped))"; fi;;
    *) NF=$((NF + 1)); fail "$n exited $RC"; tail -n 30 "$OUTD/logs/$n.out" "$OUTD/logs/$n.err";;
  esac
done
say "tests/cuda: $NT binaries, $NP passed, $NS skipped, $NF failed"

# 3. The drivers under STARPU_NCUDA=1 and 0.
MATS="$WORK/matrices"; mkdir -p "$MATS"
LAP="$MATS/laplace3d_$LAP_N.mtx"
awk -v N="$LAP_N" 'BEGIN {
  n = N * N * N; nnz = n + 3 * N * N * (N - 1)
  print "%%MatrixMarket matrix coordinate real symmetric"
  print "% 7-point 3-D Laplacian on an " N "^3 grid (lower triangle), scripts/gpu-check.sh"
  print n, n, nnz
  for (k = 0; k < N; k++) for (j = 0; j < N; j++) for (i = 0; i < N; i++) {
    p = i + N * (j + N * k) + 1
    print p, p, 6
    if (i > 0) print p, p - 1, -1
    if (j > 0) print p, p - N, -1
    if (k > 0) print p, p - N * N, -1
  }
}' >"$LAP" || fail "could not write the Laplacian $LAP"

# name | JSON time key | extra environment | command (bundle binaries, data paths)
STEPS=()
STEPS+=("ldlt_laplace3d_$LAP_N|factor_s||stardiff-ldlt $LAP --json")
STEPS+=("ldlt_laplace3d_${LAP_N}_ncpu2|factor_s|STARPU_NCPU=2|stardiff-ldlt $LAP --json")
for m in s3rmt3m3 aug3dcqp; do
  f="$DATA/matrices/$m.mtx.gz"
  if [ -f "$f" ]; then STEPS+=("ldlt_$m|factor_s||stardiff-ldlt $f --json")
  else say "SKIP: ldlt_$m: no $f"; fi
done
STEPS+=("poisson_${POI_N}_primal|primal_s||stardiff-poisson --nx $POI_N --ny $POI_N --json")
STEPS+=("poisson_${POI_N}_adjoint|adjoint_s||stardiff-poisson --nx $POI_N --ny $POI_N --adjoint --json")
PF_CASE="$DATA/matpower/case9241pegase.m"
if [ -f "$PF_CASE" ]; then
  STEPS+=("pf_case9241pegase|total_s||stardiff-pf $PF_CASE --json")
  # The batch: GPU_CHECK_PF_BATCH=FILE (scenario CSV, README "stardiff-pf --batch"), else
  # 1000 scenarios generated by the driver (every load scaled by a factor in [0.95, 1.05]).
  BATCH="${GPU_CHECK_PF_BATCH:-}"
  if ! "$BIN/stardiff-pf" --help 2>&1 | grep -q -- '--batch-random'; then
    say "SKIP: pf batch: this stardiff-pf has no --batch / --batch-random (issue 21 item 4 not done)"
  elif [ -n "$BATCH" ] && [ ! -f "$BATCH" ]; then
    say "SKIP: pf batch: no scenario file $BATCH (GPU_CHECK_PF_BATCH=FILE)"
  elif [ -n "$BATCH" ]; then
    STEPS+=("pf_case9241pegase_batch|total_s||stardiff-pf $PF_CASE --batch $BATCH --json")
  else
    STEPS+=("pf_case9241pegase_batch|total_s||stardiff-pf $PF_CASE --batch-random 1000 --batch-seed 1 --batch-scale 0.95,1.05 --json")
  fi
else
  say "SKIP: pf_case9241pegase: no $PF_CASE"
fi

declare -A T=() W=() K=() POI_PRIMAL=() POI_FACTOR=()
POI_ITERS=0
SETTINGS="1 0"
if [ "$HAVE_GPU" = 0 ]; then say "SKIP: STARPU_NCUDA=1 runs (no CUDA device)"; SETTINGS="0"; fi
for rep in $(seq 1 "$REPEATS"); do
 for ncuda in $SETTINGS; do
  echo "== drivers, STARPU_NCUDA=$ncuda, run $rep of $REPEATS"
  for s in "${STEPS[@]}"; do
    IFS='|' read -r name key envs cmd <<<"$s"
    log="$OUTD/logs/${name}.ncuda$ncuda.run$rep"
    # shellcheck disable=SC2086  # cmd is word-split on purpose (paths have no spaces)
    run_step "$log" env STARPU_NCUDA=$ncuda STARPU_SCHED=dmda $envs "$BIN"/$cmd
    if [ "$RC" = 125 ] && [ -n "${T[$name.$ncuda]:-}" ] && [ "${T[$name.$ncuda]}" != fail ]; then
      say "$name (STARPU_NCUDA=$ncuda): run $rep skipped for the budget, run $((rep - 1))'s figure kept"; continue
    fi
    W[$name.$ncuda]=$WALL
    if [ "$RC" != 0 ]; then
      fail "$name (STARPU_NCUDA=$ncuda) exited $RC"; tail -n 15 "$log.err"; T[$name.$ncuda]=fail; continue
    fi
    T[$name.$ncuda]=$(awk -v a="$(json_get "$log.out" "$key")" 'BEGIN { printf "%.5g", a }')
    [ "$key" = adjoint_s ] && T[$name.$ncuda]=$(awk -v a="$(json_get "$log.out" forward_s)" \
      -v b="$(json_get "$log.out" adjoint_s)" 'BEGIN { printf "%.5g", a + b }')
    [ "$key" = primal_s ] && POI_PRIMAL[$ncuda]=${T[$name.$ncuda]} && POI_ITERS=$(json_get "$log.out" iters)
    [ "$key" = adjoint_s ] && POI_FACTOR[$ncuda]=$(json_get "$log.out" adjoint_factor)
    case "$name" in
      ldlt_*) K[$name.$ncuda]="inertia $(grep -o '"inertia":{[^}]*}' "$log.out")";;
      poisson_*) K[$name.$ncuda]="E $(json_get "$log.out" total_error)";;
      pf_*) K[$name.$ncuda]="iterations $(json_get "$log.out" iterations) converged $(json_get "$log.out" converged)";;
    esac
    printf '%-32s %-10s %10s s  (wall %s s)  %s\n' "$name" "$key" "${T[$name.$ncuda]}" "$WALL" "${K[$name.$ncuda]}"
  done
 done
done

# Agreement between the two settings.
for s in "${STEPS[@]}"; do
  IFS='|' read -r name key envs cmd <<<"$s"
  a="${K[$name.1]:-}"; b="${K[$name.0]:-}"
  [ -n "$a" ] && [ -n "$b" ] || continue
  case "$name" in
    poisson_*)
      awk -v a="${a#E }" -v b="${b#E }" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b;
        exit !(d <= 1e-12 * m) }' || fail "$name: E differs between STARPU_NCUDA=1 ($a) and 0 ($b)";;
    *) [ "$a" = "$b" ] || fail "$name: STARPU_NCUDA=1 gives '$a', STARPU_NCUDA=0 '$b'";;
  esac
done

# 4. The table.
echo "== times (s; GPU = STARPU_NCUDA=1, CPU = STARPU_NCUDA=0; ratio GPU/CPU < 1: GPU faster)"
printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' step key gpu_s cpu_s gpu_over_cpu gpu_wall_s cpu_wall_s >"$OUTD/table.tsv"
printf '%-32s %-10s %12s %12s %10s\n' step key GPU CPU GPU/CPU
for s in "${STEPS[@]}"; do
  IFS='|' read -r name key envs cmd <<<"$s"
  g="${T[$name.1]:-skip}"; c="${T[$name.0]:-skip}"
  r=$(awk -v g="$g" -v c="$c" 'BEGIN { if (g + 0 > 0 && c + 0 > 0) printf "%.3f", g / c; else print "-" }')
  [ "$key" = adjoint_s ] && key="fwd+adj_s"
  printf '%-32s %-10s %12s %12s %10s\n' "$name" "$key" "$g" "$c" "$r"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$key" "$g" "$c" "$r" "${W[$name.1]:--}" "${W[$name.0]:--}" >>"$OUTD/table.tsv"
done
# The issue's targets (meaningful on a device; figures only, no verdict).
echo "== targets (issue 21)"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2fx", a / b; else print "n/a" }'; }
echo "LDL^T $LAP_N^3 factor: 2 CPU workers / STARPU_NCUDA=1 = $(ratio "${T[ldlt_laplace3d_${LAP_N}_ncpu2.0]:-}" "${T[ldlt_laplace3d_$LAP_N.1]:-}") (target >= 10)"
for nc in $SETTINGS; do
  bw=$(awk -v n="$POI_N" -v k="$POI_ITERS" -v t="${POI_PRIMAL[$nc]:-}" 'BEGIN { if (t + 0 > 0) printf "%.1f", 24 * n * n * k / t / 1e9; else print "n/a" }')
  echo "Poisson $POI_N^2, STARPU_NCUDA=$nc: 24 B/cell/iteration x $POI_ITERS iterations / primal_s = $bw GB/s; adjoint factor ${POI_FACTOR[$nc]:-n/a} (target <= 4)"
done
say "done in $(( $(date +%s) - START )) s: tests $NP passed, $NS skipped, $NF failed; $FAILS failure(s) in all"
[ "$FAILS" = 0 ]
}

main "$@" 2>&1 | tee "$OUTD/check.txt"
exit "${PIPESTATUS[0]}"
