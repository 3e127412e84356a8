// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/mpi/test_mesh_mpi.cpp — the StarPU-MPI runtime and the distributed mesh, run under
// `mpirun -np 2` (label mpi): tiles on both ranks, a stencil loop with halos crossing ranks,
// a reduction and an active scalar, and a taped adjoint, each bitwise equal to the
// sequential executor's result computed on every rank; collective host reads; the errors
// (mismatched distributions, owner set after registration, a rank out of range, a task
// failing on rank 1 reported on both); a rank allocating only the tiles it owns, and host
// writes on the owner reaching the copies other ranks had cached. Every test skips unless
// the runtime runs on >= 2 ranks.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "stardiff/adjoint.hpp"
#include "stardiff/mesh.hpp"
#include "stardiff/runtime/runtime.hpp"
#include "runtime_environment.hpp"

using namespace stardiff;
using mesh::Acc;

namespace {
#define REQUIRE_RANKS()                                                             \
  do {                                                                              \
    if (mpi_size() < 2) GTEST_SKIP() << "needs a StarPU-MPI runtime on >= 2 ranks"; \
  } while (0)

struct Smooth {  // u2 = average of the 5-point neighbourhood times s
  static constexpr unsigned adjoint_reads = 0b010;  // reads s only
  void operator()(Acc<const double> u, Acc<const double> s, Acc<double> u2) const {
    u2(0, 0) = s(0, 0) * (u(0, 0) + u(-1, 0) + u(1, 0) + u(0, -1) + u(0, 1)) * 0.2;
  }
  void adjoint(Acc<const double>, Acc<double> u_a1s, Acc<const double> s, Acc<double>, Acc<const double>,
               Acc<double> u2_a1s) const {
    const double c = u2_a1s(0, 0) * s(0, 0) * 0.2;
    u_a1s(0, 0) += c;
    u_a1s(-1, 0) += c;
    u_a1s(1, 0) += c;
    u_a1s(0, -1) += c;
    u_a1s(0, 1) += c;
  }
};
struct SquaredSum {  // r += k * u^2 (k an active scalar)
  void operator()(Acc<const double> u, const double* k, double* r) const { *r += *k * u(0, 0) * u(0, 0); }
  void adjoint(Acc<const double> u, Acc<double> u_a1s, const double* k, double* k_a1s, const double*,
               const double* r_a1s) const {
    u_a1s(0, 0) += 2.0 * *k * u(0, 0) * *r_a1s;
    *k_a1s += u(0, 0) * u(0, 0) * *r_a1s;
  }
};
struct Copy {
  static constexpr unsigned adjoint_reads = 0;
  void operator()(Acc<const double> a, Acc<double> b) const { b(0, 0) = a(0, 0); }
  void adjoint(Acc<const double>, Acc<double> a_a1s, Acc<const double>, Acc<double> b_a1s) const {
    a_a1s(0, 0) += b_a1s(0, 0);
  }
};

struct Result {
  double value = 0, k_adjoint = 0;
  std::vector<double> u, u_adjoint;
};

// Three smoothing sweeps and a weighted squared sum, taped and reversed.
Result run(Executor& ex, int tiles, bool rebalance) {
  mesh::Block b(ex, "grid", {13, 11}, tiles);
  if (rebalance) {  // an uneven distribution: the last tile alone on rank 1
    std::vector<int> owners(b.tiles(), 0);
    owners.back() = 1;
    b.set_owners(owners);
  }
  mesh::Dat<double> u(b, "u", mesh::Halo(1)), u2(b, "u2", mesh::Halo(1)), s(b, "s", mesh::Halo(1));
  mesh::Stencil five(2, {0, 0, -1, 0, 1, 0, 0, -1, 0, 1}, "five");
  u.set([](int i, int j, int) { return 0.1 * i - 0.05 * j + 0.01 * i * j; });
  s.set([](int i, int j, int) { return 1.0 + 0.02 * ((i * 7 + j * 3) % 5); });
  mesh::Scalar<double> k(b, "k", 0.75);
  mesh::Reduction<double> r(b, mesh::ReduceOp::SUM, "r");
  Tape tape("mpi");
  tape.start();
  {
    for (int it = 0; it < 3; ++it) {
      mesh::par_loop("smooth", b, b.interior(), Smooth{}, mesh::arg_dat(u, five, mesh::READ),
                     mesh::arg_dat(s, mesh::READ), mesh::arg_dat(u2, mesh::WRITE));
      mesh::par_loop("copy", b, b.interior(), Copy{}, mesh::arg_dat(u2, mesh::READ), mesh::arg_dat(u, mesh::WRITE));
    }
    mesh::par_loop("sq", b, b.interior(), SquaredSum{}, mesh::arg_dat(u, mesh::READ), mesh::arg_scalar(k),
                   mesh::arg_reduce(r));
  }
  tape.stop();
  Result res;
  res.value = r.value();
  tape.seed(r, 1.0);
  tape.reverse();
  ex.wait_all();
  res.k_adjoint = k.adjoint();
  res.u = u.values().data;
  res.u_adjoint = u.adjoint().data;
  return res;
}

void expect_bitwise(const Result& a, const Result& b) {
  EXPECT_EQ(std::memcmp(&a.value, &b.value, sizeof(double)), 0) << a.value << " vs " << b.value;
  EXPECT_EQ(std::memcmp(&a.k_adjoint, &b.k_adjoint, sizeof(double)), 0) << a.k_adjoint << " vs " << b.k_adjoint;
  ASSERT_EQ(a.u.size(), b.u.size());
  ASSERT_EQ(a.u_adjoint.size(), b.u_adjoint.size());
  EXPECT_EQ(std::memcmp(a.u.data(), b.u.data(), a.u.size() * sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(a.u_adjoint.data(), b.u_adjoint.data(), a.u_adjoint.size() * sizeof(double)), 0);
}
}  // namespace

TEST(MeshMpi, RuntimeReportsRanks) {
  REQUIRE_RANKS();
  EXPECT_EQ(mpi_size(), 2);
  EXPECT_TRUE(mpi_rank() == 0 || mpi_rank() == 1);
  StarpuExecutor ex;
  mesh::Block b(ex, "g", {4, 8}, 4);
  EXPECT_EQ(b.owners(), (std::vector<int>{0, 0, 1, 1}));  // block distribution along y
}

TEST(MeshMpi, DistributedLoopsAndAdjointEqualSequential) {
  REQUIRE_RANKS();
  // The same tiling as the reference: the reverse halo exchange adds ghost-row adjoints
  // after the tile's own, so the adjoint's rounding depends on the tiling, not on the ranks.
  for (int tiles : {2, 3, 5}) {
    SequentialExecutor seq;
    const Result want = run(seq, tiles, false);
    EXPECT_GT(want.value, 0.0);
    EXPECT_NE(want.k_adjoint, 0.0);
    for (bool rebalance : {false, true}) {
      SCOPED_TRACE("tiles " + std::to_string(tiles) + (rebalance ? ", last tile alone on rank 1" : ""));
      StarpuExecutor ex;
      expect_bitwise(run(ex, tiles, rebalance), want);
    }
  }
}

// Smooth u into u2, then set u anew (the owner alone writes it) and smooth again: the
// copies of u's tiles that the first sweep's halo exchanges left on the other rank must
// not be reused.
std::vector<double> smooth_set_smooth(Executor& ex) {
  mesh::Block b(ex, "grid", {9, 12}, 4);
  mesh::Dat<double> u(b, "u", mesh::Halo(1), {.active = false}), u2(b, "u2", mesh::Halo(1), {.active = false}),
      s(b, "s", mesh::Halo(1), {.active = false});
  mesh::Stencil five(2, {0, 0, -1, 0, 1, 0, 0, -1, 0, 1}, "five");
  s.set([](int, int, int) { return 1.0; });
  u.set([](int i, int j, int) { return 1.0 * i + 0.5 * j; });
  mesh::par_loop_passive("smooth", b, b.interior(), Smooth{}, mesh::arg_dat(u, five, mesh::READ),
                         mesh::arg_dat(s, mesh::READ), mesh::arg_dat(u2, mesh::WRITE));
  u.set([](int i, int j, int) { return 3.0 * i * j - 2.0 * j; });
  mesh::par_loop_passive("smooth", b, b.interior(), Smooth{}, mesh::arg_dat(u, five, mesh::READ),
                         mesh::arg_dat(s, mesh::READ), mesh::arg_dat(u2, mesh::WRITE));
  return u2.values().data;
}

TEST(MeshMpi, RankAllocatesOnlyItsTiles) {
  REQUIRE_RANKS();
  StarpuExecutor ex;
  ASSERT_TRUE(ex.distributed());
  mesh::Block b(ex, "g", {10, 16}, 4);  // rows 0-3, 4-7 on rank 0; 8-11, 12-15 on rank 1
  mesh::Dat<double> u(b, "u", mesh::Halo(1)), p(b, "p", mesh::Halo(1), {.active = false});
  std::size_t want = 0;
  for (int t = 0; t < b.tiles(); ++t)
    if (b.owner(t) == mpi_rank()) want += static_cast<std::size_t>(b.bound(t + 1) - b.bound(t) + 2) * 12 * 8;
  EXPECT_EQ(p.local_bytes(), want);      // passive: the primal tiles only
  EXPECT_EQ(u.local_bytes(), 2 * want);  // active: primal and adjoint
  EXPECT_LT(u.local_bytes(), 2 * u.bytes());
  SequentialExecutor seq;  // runs everything on every rank: holds every tile
  mesh::Block bs(seq, "g", {10, 16}, 4);
  mesh::Dat<double> q(bs, "q", mesh::Halo(1), {.active = false});
  EXPECT_EQ(q.local_bytes(), q.bytes());
}

TEST(MeshMpi, HostWriteReachesCachedCopies) {
  REQUIRE_RANKS();
  SequentialExecutor seq;
  const std::vector<double> want = smooth_set_smooth(seq);
  StarpuExecutor ex;
  const std::vector<double> got = smooth_set_smooth(ex);
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(double)), 0);
}

TEST(MeshMpi, HostReadSeesOwnersData) {
  REQUIRE_RANKS();
  StarpuExecutor ex;
  VectorHandle<double> v(3, "on_rank_1");
  v.set_owner(1);
  struct Fill {
    static void cpu(const TaskContext& t) {
      double* p = t.buffers[0].data<double>();
      for (std::size_t i = 0; i < t.buffers[0].count(); ++i) p[i] = 10.0 + i + 100.0 * mpi_rank();
    }
  };
  static const Codelet cl("mpi_fill", &Fill::cpu);
  ex.submit(cl, {out(v)});
  ex.wait_all();
  auto g = v.acquire(Access::R);
  const double* p = static_cast<const double*>(g.data());
  EXPECT_EQ(p[0], 110.0);  // written on rank 1, read on both
  EXPECT_EQ(p[2], 112.0);
}

TEST(MeshMpi, MismatchedDistributionsRejected) {
  REQUIRE_RANKS();
  StarpuExecutor ex;
  mesh::Block b(ex, "g", {6, 6}, 2);
  mesh::Dat<double> a(b, "a", mesh::Halo(0), {.active = false});
  b.set_owners({1, 0});
  mesh::Dat<double> c(b, "c", mesh::Halo(0), {.active = false});
  try {
    mesh::par_loop_passive("copy", b, b.interior(), Copy{}, mesh::arg_dat(a, mesh::READ), mesh::arg_dat(c, mesh::WRITE));
    FAIL() << "no Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("distributed over ranks {1,0}"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("dat 'a'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(b.set_owners({0, 2}), Error);  // no rank 2
  EXPECT_THROW(b.set_owners({0}), Error);     // one per tile
}

TEST(MeshMpi, OwnerFixedOnceRegistered) {
  REQUIRE_RANKS();
  StarpuExecutor ex;
  VectorHandle<double> v(2, "v");
  struct Zero {
    static void cpu(const TaskContext& t) { t.buffers[0].data<double>()[0] = 0; }
  };
  static const Codelet cl("mpi_zero", &Zero::cpu);
  ex.submit(cl, {out(v)});
  ex.wait_all();
  EXPECT_THROW(v.set_owner(1), Error);
  EXPECT_THROW(v.set_owner(-5), Error);
  VectorHandle<double> w(2, "w");
  w.set_owner(7);  // no rank 7: rejected when StarPU-MPI registers it
  EXPECT_THROW(ex.submit(cl, {out(w)}), Error);
}

TEST(MeshMpi, TaskFailureOnOneRankRaisedOnAll) {
  REQUIRE_RANKS();
  StarpuExecutor ex;
  VectorHandle<double> v(1, "fails_on_1");
  v.set_owner(1);
  struct Throw {
    static void cpu(const TaskContext&) { throw Error("deliberate failure"); }
  };
  static const Codelet cl("mpi_throw", &Throw::cpu);
  ex.submit(cl, {out(v)});
  try {
    ex.wait_all();
    FAIL() << "no Error on rank " << mpi_rank();
  } catch (const Error& e) {
    const std::string want = mpi_rank() == 1 ? "deliberate failure" : "failed on MPI rank 1";
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}
