// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_adjoint_api.cpp — the tape's safety rules: adjoints do not carry over
// between tapes (unless set_accumulate), verify mode catches a wrong adjoint_reads mask
// and leaves correct ones bitwise alone, adjoints read before reverse() and dats destroyed
// under a tape are Errors naming both, seed takes a lambda, signature traits.
#include <gtest/gtest.h>

#include <cstdlib>

#include "poisson_problem.hpp"
#include "unit/test_adjoint_cases.hpp"

#include "support/error_text.hpp"

using namespace stardiff;
using namespace stardiff::mesh;

namespace {

// Records the Poisson iterations and error on a freshly set-up problem with `tape`.
DatView<double> poisson_df(poisson::Problem& p, Tape& tape) {
  p.setup();
  tape.start();
  p.iterate(4);
  p.submit_error();
  tape.stop();
  tape.seed(p.err, 1.0);
  tape.reverse();
  p.block.executor().wait_all();
  return p.f.adjoint();
}

struct ErrorWrongMask : poisson::ErrorKernel {  // declares only ref, but the adjoint reads u
  static constexpr unsigned adjoint_reads = 0b010;
};
struct Copy {
  static constexpr unsigned adjoint_reads = 0;
  void operator()(Acc<const double> a, Acc<double> b) const { b(0, 0) = a(0, 0); }
  void adjoint(Acc<const double>, Acc<double> a_a1s, Acc<const double>, Acc<double> b_a1s) const {
    a_a1s(0, 0) += b_a1s(0, 0);
  }
};
struct NonConstAdjoint {
  void operator()(Acc<const double> a, Acc<double> b) const { b(0, 0) = a(0, 0); }
  void adjoint(Acc<const double>, Acc<double>, Acc<const double>, Acc<double>) {}
};
struct AdjointMatchesNothing {
  void operator()(Acc<const double> a, Acc<double> b) const { b(0, 0) = a(0, 0); }
  void adjoint(const double*) const {}
};
}  // namespace

TEST(AdjointApi, SecondTapeStartsFromZero) {
  SequentialExecutor ex;
  poisson::Problem p(ex, 20, 20, 3);
  Tape first("first");
  const auto g1 = poisson_df(p, first);
  Tape second("second");
  const auto g2 = poisson_df(p, second);
  EXPECT_EQ(g2.data, g1.data);  // not 2 g1: the second tape zeroed what the first left
  Tape third("third");
  third.set_accumulate(true);
  EXPECT_TRUE(third.accumulates());
  const auto g3 = poisson_df(p, third);
  EXPECT_NE(g3.data, g1.data);  // the leftovers of the second tape take part (old behaviour)
}

TEST(AdjointApi, VerifyModeKeepsCorrectMasksBitwise) {
  SequentialExecutor ex;
  for (int tiles : {1, 3}) {
    poisson::Problem a(ex, 20, 20, tiles), b(ex, 20, 20, tiles);
    a.setup();
    b.setup();
    auto ga = poisson::record_and_reverse(a, 10, SavePolicy::Needed);
    auto gb = poisson::record_and_reverse(b, 10, SavePolicy::Verify);
    EXPECT_EQ(ga.E, gb.E);
    EXPECT_EQ(ga.dE_df.data, gb.dE_df.data);
    EXPECT_EQ(ga.dE_du.data, gb.dE_du.data);
    EXPECT_EQ(ga.tape_bytes, gb.tape_bytes);  // verify saves nothing extra
  }
  auto n1 = cases::run_1d(ex, 40, 3), v1 = cases::run_1d(ex, 40, 3, SavePolicy::Verify);
  EXPECT_EQ(n1.da, v1.da);
  EXPECT_EQ(n1.dx.data, v1.dx.data);
  EXPECT_EQ(n1.dy.data, v1.dy.data);
  EXPECT_EQ(n1.bytes, v1.bytes);
  auto n3 = cases::run_3d(ex, 6, 5, 9, 3), v3 = cases::run_3d(ex, 6, 5, 9, 3, true, nullptr, nullptr, SavePolicy::Verify);
  EXPECT_EQ(n3.ds, v3.ds);
  EXPECT_EQ(n3.da.data, v3.da.data);
  EXPECT_EQ(n3.db.data, v3.db.data);
  EXPECT_EQ(n3.dc.data, v3.dc.data);
}

TEST(AdjointApi, VerifyModeNamesAWrongMask) {
  for (bool by_env : {false, true}) {
    SequentialExecutor ex;
    poisson::Problem p(ex, 12, 10, 2);
    p.setup();
    if (by_env) setenv("STARDIFF_CHECK_ADJOINT_READS", "1", 1);
    Tape tape("verify", by_env ? SavePolicy::Needed : SavePolicy::Verify);
    if (by_env) unsetenv("STARDIFF_CHECK_ADJOINT_READS");
    EXPECT_EQ(tape.policy(), SavePolicy::Verify);
    tape.start();
    p.iterate(2);
    p.err.reset();
    par_loop("error", p.block, p.block.interior(), ErrorWrongMask{}, arg_dat(p.u, p.zero, READ),
             arg_dat(p.ref, p.zero, READ), arg_reduce(p.err));
    tape.stop();
    tape.seed(p.err, 1.0);
    tape.reverse();
    EXPECT_ERROR_HAS(ex.wait_all(), "task 'error_adjoint'", "argument 0", "dat 'u'", "adjoint_reads");
  }
  Tape plain("plain");
  EXPECT_EQ(plain.policy(), SavePolicy::Needed);
}

TEST(AdjointApi, AdjointBeforeReverseAndDestroyedDats) {
  SequentialExecutor ex;
  Block b(ex, "grid", {8, 8}, 2);
  Dat<double> u(b, "u", Halo{1}), v(b, "v", Halo{1});
  Scalar<double> s(b, "s", 1.0);
  Reduction<double> r(b, ReduceOp::SUM, "r");
  Tape tape("t1");
  tape.start();
  par_loop("copy", b, b.interior(), Copy{}, arg_dat(u, READ), arg_dat(v, WRITE));
  tape.stop();
  EXPECT_ERROR_HAS(u.adjoint(), "Dat 'u'", "before tape 't1'", "reversed");
  tape.seed(v, [](int, int, int, int) { return 1.0; });  // a lambda, no explicit <double>
  tape.reverse();
  ex.wait_all();
  EXPECT_EQ(u.adjoint()(3, 3), 1.0);
  {
    Tape t2("t2");
    t2.start();
    {
      Dat<double> tmp(b, "tmp", Halo{1});
      par_loop("copy_tmp", b, b.interior(), Copy{}, arg_dat(tmp, READ), arg_dat(v, WRITE));
    }
    t2.stop();
    EXPECT_ERROR_HAS(t2.reverse(), "Tape::reverse", "dat 'tmp'", "tape 't2'", "destroyed");
    EXPECT_ERROR_HAS(t2.seed(v, [](int, int, int, int) { return 1.0; }), "dat 'tmp'", "tape 't2'");
    t2.clear();
    EXPECT_NO_THROW(v.adjoint());
  }
  {
    // A tape destroyed before its dats leaves nothing behind.
    Tape t3("t3");
    t3.start();
    par_loop("copy", b, b.interior(), Copy{}, arg_dat(u, READ), arg_dat(v, WRITE));
    t3.stop();
  }
  EXPECT_NO_THROW(u.adjoint());
}

TEST(AdjointApi, SignatureTraits) {
  static_assert(!mesh::detail::adjoint_is_const<NonConstAdjoint>());
  static_assert(mesh::detail::adjoint_is_const<Copy>());
  static_assert(mesh::detail::adjoint_ok_some_mask<Copy, ArgDat<double, Mode::Read>, ArgDat<double, Mode::Write>>());
  static_assert(
      !mesh::detail::adjoint_ok_some_mask<AdjointMatchesNothing, ArgDat<double, Mode::Read>, ArgDat<double, Mode::Write>>());
  SUCCEED();
}
