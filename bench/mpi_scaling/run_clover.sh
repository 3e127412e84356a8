#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/mpi_scaling/run_clover.sh BUILD_DIR DECK [ARGS...] — mpi_scaling_clover on 1, 2 and 4 ranks
# (oversubscribed on a small machine: the counts matter, not the times), StarPU-MPI's byte
# counters on, waiting ranks yielding their core.
set -eu
bin="$1/bench/mpi_scaling/mpi_scaling_clover"; shift
for r in 1 2 4; do
  STARPU_COMM_STATS=1 STARPU_NCPU=1 STARPU_SILENT=1 OMPI_MCA_mpi_yield_when_idle=1 \
    mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$r" "$bin" "$@" 2>/dev/null
done
