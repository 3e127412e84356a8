// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/starpu/test_adjoint_checkpointing_starpu.cpp — checkpointed tapes as StarPU tasks give
// bitwise the sequential save-all gradients (Revolve, online, fewer steps; Poisson and the
// nonlinear stencil with reductions in the steps; steps holding external functions; MIN/MAX
// extrema that move), under whichever STARPU_SCHED ctest sets.
// DiskSwap runs only where ctest sets STARPU_DISK_SWAP (with STARPU_LIMIT_CPU_MEM below the
// snapshot total): StarPU must evict snapshots to disk (files in the swap directory and bytes
// on its disk node at the turn) and the gradients stay bitwise the sequential save-all ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "runtime_environment.hpp"
#include "support/error_text.hpp"
#include "unit/test_adjoint_checkpointing_cases.hpp"
#include "unit/test_adjoint_checkpointing_external_cases.hpp"

using namespace stardiff;
using ckpt_cases::Result;

using ckpt_cases::expect_same;

TEST(AdjointCheckpointingStarpu, NonlinearBitwiseEqualsSequentialSaveAll) {
  SequentialExecutor se;
  StarpuExecutor pe;
  const Result ref = ckpt_cases::nonlinear(se, Checkpointing::save_all(), 10, true, 40, 4);
  expect_same(ref, ckpt_cases::nonlinear(pe, Checkpointing::save_all(), 10, true, 40, 4), "starpu save-all");
  for (int s : {1, 3, 5}) {
    const Result r = ckpt_cases::nonlinear(pe, Checkpointing::revolve(10, s), 10, true, 40, 4);
    expect_same(ref, r, "starpu revolve(10, " + std::to_string(s) + ")");
    EXPECT_EQ(r.recomputed, CheckpointSchedule::optimal_recomputations(10, s));
  }
  const Result o = ckpt_cases::nonlinear(pe, Checkpointing::online(3), 10, true, 40, 4);
  expect_same(ref, o, "starpu online(3)");
  EXPECT_EQ(o.recomputed, online_vs_offline(10, 3).online);
  const Result ref5 = ckpt_cases::nonlinear(se, Checkpointing::save_all(), 5, true, 40, 4);
  expect_same(ref5, ckpt_cases::nonlinear(pe, Checkpointing::revolve(7, 2), 5, true, 40, 4),
              "starpu revolve(7, 2) stopped at 5");
}

TEST(AdjointCheckpointingStarpu, PoissonBitwiseEqualsSequentialSaveAll) {
  SequentialExecutor se;
  StarpuExecutor pe;
  const Result ref = ckpt_cases::poisson(se, Checkpointing::save_all(), 12, 64, 48, 5);
  expect_same(ref, ckpt_cases::poisson(pe, Checkpointing::revolve(12, 2), 12, 64, 48, 5), "starpu revolve(12, 2)");
  expect_same(ref, ckpt_cases::poisson(pe, Checkpointing::online(2), 12, 64, 48, 5), "starpu online(2)");
}

TEST(AdjointCheckpointingStarpu, ExternalStepsAndMovingExtremaBitwiseEqualSequentialSaveAll) {
  namespace cx = ckpt_ext_cases;
  SequentialExecutor se;
  StarpuExecutor pe;
  for (bool recompute : {false, true}) {
    const std::string v = recompute ? " (recompute)" : " (outputs saved)";
    const cx::Result tri = cx::tridiag_steps(se, Checkpointing::save_all(), 9, recompute);
    cx::expect_same(tri, cx::tridiag_steps(pe, Checkpointing::revolve(9, 2), 9, recompute), "tridiag revolve" + v);
    cx::expect_same(tri, cx::tridiag_steps(pe, Checkpointing::online(2), 9, recompute), "tridiag online" + v);
    const cx::Result sp = cx::sparse_steps(se, Checkpointing::save_all(), 7, recompute);
    const cx::Result r = cx::sparse_steps(pe, Checkpointing::revolve(7, 2), 7, recompute);
    cx::expect_same(sp, r, "sparse revolve" + v);
    EXPECT_EQ(r.factorizations, 1) << v;
  }
  const cx::Result peak = cx::moving_peak(se, Checkpointing::save_all(), 8);
  cx::expect_same(peak, cx::moving_peak(pe, Checkpointing::revolve(8, 2), 8), "moving peak revolve(8, 2)");
}

namespace {
struct DirUse {
  std::size_t files = 0, bytes = 0;
};
// Regular files under `dir` (recursively) and their sizes.
DirUse dir_use(const std::string& dir) {
  DirUse u;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); !ec && it != decltype(it)(); it.increment(ec))
    if (it->is_regular_file(ec)) {
      ++u.files;
      u.bytes += it->file_size(ec);
    }
  return u;
}
long long disk_node_used() {
  auto* env = static_cast<stardiff::testing::RuntimeEnvironment*>(stardiff::testing::runtime_environment);
  long long used = -1;
  for (const MemoryNodeInfo& m : env->runtime->memory_nodes())
    if (m.kind == "disk") used = std::max(used, m.used());
  return used;
}
}  // namespace

// Snapshots and checkpoint buffers are managed handles: with main RAM limited below the
// snapshots StarPU evicts them to its disk node (files in STARPU_DISK_SWAP, bytes on the disk
// node) and the gradients stay bitwise the sequential save-all ones.
TEST(AdjointCheckpointingStarpu, DiskSwap) {
  const char* dir = std::getenv("STARPU_DISK_SWAP");
  if (dir == nullptr) GTEST_SKIP() << "STARPU_DISK_SWAP is not set";
  const char* limit_mb = std::getenv("STARPU_LIMIT_CPU_MEM");
  ASSERT_NE(limit_mb, nullptr) << "the disk-swap test needs STARPU_LIMIT_CPU_MEM";
  const std::size_t limit = static_cast<std::size_t>(std::atoll(limit_mb)) << 20;
  ASSERT_GE(disk_node_used(), 0) << "StarPU has no disk node (STARPU_DISK_SWAP_BACKEND / _SIZE)";
  SequentialExecutor se;
  StarpuExecutor pe;
  const int n = 384, steps = 12, snaps = 6;
  const Result ref = ckpt_cases::nonlinear(se, Checkpointing::save_all(), steps, true, n, 4);
  const DirUse before = dir_use(dir);
  DirUse at_turn;
  long long disk_at_turn = -1;
  const Result r = ckpt_cases::nonlinear(pe, Checkpointing::revolve(steps, snaps), steps, true, n, 4,
                                         SavePolicy::Needed, [&] {
                                           pe.wait_all();
                                           at_turn = dir_use(dir);
                                           disk_at_turn = disk_node_used();
                                         });
  expect_same(ref, r, "revolve(12, 6) with the disk node");
  EXPECT_EQ(r.recomputed, CheckpointSchedule::optimal_recomputations(steps, snaps));
  ASSERT_GT(r.peak_snapshot_bytes, limit);  // the snapshots alone exceed the memory limit
  // What StarPU put on its disk node at the turn: at least the snapshots beyond the limit.
  const std::size_t beyond = r.peak_snapshot_bytes - limit;
  EXPECT_GE(disk_at_turn, static_cast<long long>(beyond)) << "disk node bytes at the turn";
  EXPECT_GE(at_turn.bytes, before.bytes + beyond) << at_turn.files << " files in " << dir;
  EXPECT_GT(at_turn.files, before.files);
  std::printf("disk swap: limit %zu B, peak snapshots %zu B, at the turn: disk node %lld B, %zu files %zu B in %s\n",
              limit, r.peak_snapshot_bytes, disk_at_turn, at_turn.files - before.files,
              at_turn.bytes - before.bytes, dir);
  // Save-all on StarPU under the same limit: its checkpoint buffers are managed too.
  expect_same(ref, ckpt_cases::nonlinear(pe, Checkpointing::save_all(), steps, true, n, 4), "starpu save-all");
}

// One checkpoint buffer larger than the limit: StarPU could never allocate it (1.3.10 then
// waits forever, purging). The submission is refused with an Error naming limit and handle.
TEST(AdjointCheckpointingStarpu, DiskSwapTileAboveTheLimitIsRefused) {
  const char* limit_mb = std::getenv("STARPU_LIMIT_CPU_MEM");
  if (std::getenv("STARPU_DISK_SWAP") == nullptr || limit_mb == nullptr) GTEST_SKIP() << "no memory limit set";
  const std::size_t limit = static_cast<std::size_t>(std::atoll(limit_mb)) << 20;
  int n = 64;
  while (static_cast<std::size_t>(n + 2) * (n + 2) * sizeof(double) <= limit) n *= 2;  // one tile > limit
  StarpuExecutor pe;
  const std::string msg = stardiff::testing::error_of([&] {
    ckpt_cases::nonlinear(pe, Checkpointing::revolve(3, 2), 3, false, n, 1);
  });
  EXPECT_NE(msg.find("STARPU_LIMIT_CPU_MEM"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'nl_warp:save_u[0]'"), std::string::npos) << msg;  // the prefix loop's save, the first
  // The runtime goes on: a run that fits still gives the sequential result.
  SequentialExecutor se;
  expect_same(ckpt_cases::nonlinear(se, Checkpointing::save_all(), 3, false, 96, 2),
              ckpt_cases::nonlinear(pe, Checkpointing::revolve(3, 2), 3, false, 96, 2), "after the refusal");
}
