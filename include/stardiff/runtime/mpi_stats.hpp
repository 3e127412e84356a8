// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/runtime/mpi_stats.hpp — what this rank of a StarPU-MPI run has sent and run.
//
// Contract:
//  * mpi_comm_stats() describes this process: its rank, the bytes StarPU-MPI has sent from
//    it to each rank since the runtime started (bytes_to[r]; all zero unless STARPU_COMM_STATS=1
//    was set before the Runtime started: StarPU-MPI counts only then), the messages it
//    sent (StarPU-MPI's data sends: one per transfer) and the tasks it ran (tasks_run: the
//    StarpuExecutor submissions it executed; every rank submits all of them).
//  * Without a runtime started with MPI: rank 0, bytes_to empty, counts 0.
//  * No communication: each rank reads its own counters.
#pragma once
#include <cstddef>
#include <vector>

namespace stardiff {

struct MpiCommStats {
  int rank = 0;
  std::vector<std::size_t> bytes_to;  // per destination rank
  std::size_t messages = 0;           // data sends posted by this rank
  std::size_t tasks_run = 0;          // tasks executed on this rank
};
MpiCommStats mpi_comm_stats();

}  // namespace stardiff
