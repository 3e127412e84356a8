// SPDX-License-Identifier: LGPL-2.1-or-later
// bench/mpi_scaling/rank_stats.hpp — each rank's StarPU-MPI counters, gathered on every rank.
//
// rank_stats(ex, ranks) submits one task per rank on a 4-double handle that rank owns (the
// task runs there and reads that rank's mpi_comm_stats()), waits, and returns for each rank
// r, at [4r, 4r + 4): its rank, the tasks it ran, the sends it posted and the bytes it sent.
// Collective: every rank calls it at the same point.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "stardiff/runtime/mpi_stats.hpp"
#include "stardiff/stardiff.hpp"

namespace stardiff::bench {
inline void rank_stats_cpu(const TaskContext& t) {
  const MpiCommStats s = mpi_comm_stats();
  double* p = t.buffers[0].data<double>();
  std::size_t bytes = 0;
  for (std::size_t b : s.bytes_to) bytes += b;
  p[0] = s.rank;
  p[1] = static_cast<double>(s.tasks_run);
  p[2] = static_cast<double>(s.messages);
  p[3] = static_cast<double>(bytes);
}

inline std::vector<double> rank_stats(Executor& ex, int ranks) {
  static const Codelet cl("mpi_scaling_stats", &rank_stats_cpu);
  std::vector<VectorHandle<double>> h;
  for (int r = 0; r < ranks; ++r) {
    h.emplace_back(4, "stats_" + std::to_string(r));
    h.back().set_owner(r);
  }
  for (auto& v : h) ex.submit(cl, {out(v)});
  ex.wait_all();
  std::vector<double> per_rank;
  for (auto& v : h) {
    auto g = v.acquire(Access::R);
    const double* p = static_cast<const double*>(g.data());
    per_rank.insert(per_rank.end(), p, p + 4);
  }
  return per_rank;
}
}  // namespace stardiff::bench
