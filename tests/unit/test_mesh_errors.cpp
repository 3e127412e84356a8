// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_mesh_errors.cpp — bad input gives clear stardiff::Error naming the loop,
// argument or tape: reads beyond the halo, writes with stencils, ranges outside dats,
// dats of another block, tiles thinner than the halo, missing or mismatched adjoints,
// seeding without a recording, reversing twice, concurrent tapes, NaN check mode.
#include <gtest/gtest.h>

#include <cmath>

#include "stardiff/adjoint.hpp"
#include "stardiff/mesh.hpp"
#include "stardiff/runtime/executor.hpp"
#include "stardiff/runtime/runtime.hpp"

#include "support/error_text.hpp"

using namespace stardiff;
using namespace stardiff::mesh;

namespace {

struct Copy {
  static constexpr unsigned adjoint_reads = 0;
  void operator()(Acc<const double> a, Acc<double> b) const { b(0, 0) = a(0, 0); }
  void adjoint(Acc<const double>, Acc<double> a_a1s, Acc<const double>, Acc<double> b_a1s) const {
    a_a1s(0, 0) += b_a1s(0, 0);
  }
};
struct NoAdjoint {
  void operator()(Acc<const double> a, Acc<double> b) const { b(0, 0) = a(0, 0); }
};
struct WrongAdjoint {  // forgets b_a1s
  void operator()(Acc<const double> a, Acc<double> b) const { b(0, 0) = a(0, 0); }
  void adjoint(Acc<const double>, Acc<double>, Acc<const double>) const {}
};
struct LogKernel {
  void operator()(Acc<const double> a, Acc<double> b) const { b(0, 0) = std::log(a(0, 0) - 1.0); }
};
}  // namespace

TEST(MeshErrors, StencilBeyondHalo) {
  SequentialExecutor ex;
  Block b(ex, "grid", {8, 8}, 2);
  Dat<double> u(b, "u", Halo{1}), v(b, "v", Halo{1});
  Stencil wide(2, {-2, 0, 0, 0}, "wide");
  EXPECT_ERROR_HAS(par_loop_passive("sweep", b, b.interior(), Copy{}, arg_dat(u, wide, READ), arg_dat(v, WRITE)),
                   "par_loop 'sweep'", "argument 0", "dat 'u'", "outside the dat's halo", "dimension 0");
}

TEST(MeshErrors, WriteWithStencilAndRangeOutside) {
  SequentialExecutor ex;
  Block b(ex, "grid", {8, 8}, 2);
  Dat<double> u(b, "u", Halo{1}), v(b, "v", Halo{1});
  Stencil off(2, {0, 1}, "up");
  EXPECT_ERROR_HAS(par_loop_passive("w", b, b.interior(), Copy{}, arg_dat(u, READ), arg_dat(v, off, WRITE)),
                   "par_loop 'w'", "argument 1", "non-zero stencil");
  EXPECT_ERROR_HAS(par_loop_passive("r", b, Range{0, 8, 0, 10}, Copy{}, arg_dat(u, READ), arg_dat(v, WRITE)),
                   "par_loop 'r'", "lies outside the dat", "dimension 1");
  EXPECT_ERROR_HAS(par_loop_passive("same", b, b.interior(), Copy{}, arg_dat(u, READ), arg_dat(u, WRITE)),
                   "dat 'u' is written by argument 1");
  Block other(ex, "other", {8, 8}, 1);
  Dat<double> w(other, "w", Halo{1});
  EXPECT_ERROR_HAS(par_loop_passive("blk", b, b.interior(), Copy{}, arg_dat(w, READ), arg_dat(v, WRITE)),
                   "belongs to block 'other'");
}

TEST(MeshErrors, TilesThinnerThanHalo) {
  SequentialExecutor ex;
  Block b(ex, "grid", {8, 8}, 8);
  EXPECT_ERROR_HAS((Dat<double>(b, "deep", Halo{2})), "Dat 'deep'", "fewer than max(halo depth, 1)");
}

TEST(MeshErrors, AdjointMissingOrMismatched) {
  SequentialExecutor ex;
  Block b(ex, "grid", {8, 8}, 2);
  Dat<double> u(b, "u", Halo{1}), v(b, "v", Halo{1});
  Tape tape;
  tape.start();
  EXPECT_ERROR_HAS(par_loop("noadj", b, b.interior(), NoAdjoint{}, arg_dat(u, READ), arg_dat(v, WRITE)),
                   "par_loop 'noadj'", "no adjoint");
  EXPECT_ERROR_HAS(par_loop("wrong", b, b.interior(), WrongAdjoint{}, arg_dat(u, READ), arg_dat(v, WRITE)),
                   "par_loop 'wrong'", "does not match", "Acc<T> v_a1s");
  // Passive loops need no adjoint, even while recording.
  EXPECT_NO_THROW(par_loop_passive("fine", b, b.interior(), NoAdjoint{}, arg_dat(u, READ), arg_dat(v, WRITE)));
  tape.stop();
}

TEST(MeshErrors, TapeMisuse) {
  SequentialExecutor ex;
  Block b(ex, "grid", {8, 8}, 2);
  Dat<double> u(b, "u", Halo{1}), v(b, "v", Halo{1});
  Reduction<double> r(b, ReduceOp::SUM, "r");
  Tape tape("t1");
  EXPECT_ERROR_HAS(tape.seed(r, 1.0), "Tape::seed", "tape 't1' has recorded nothing");
  EXPECT_ERROR_HAS(tape.reverse(), "recorded nothing");
  tape.start();
  Tape other("t2");
  EXPECT_ERROR_HAS(other.start(), "another tape is recording");
  par_loop("copy", b, b.interior(), Copy{}, arg_dat(u, READ), arg_dat(v, WRITE));
  tape.stop();
  EXPECT_EQ(tape.nodes(), 1u);
  tape.reverse();
  EXPECT_ERROR_HAS(tape.reverse(), "Tape::reverse", "already reversed");
  EXPECT_ERROR_HAS(tape.seed(r, 1.0), "already reversed");
  EXPECT_ERROR_HAS(tape.start(), "clear()");
  tape.clear();
  EXPECT_NO_THROW(tape.start());
  tape.stop();
  // Passive dats: no adjoint to read.
  Dat<double> p(b, "p", Halo{0}, {.active = false});
  EXPECT_ERROR_HAS(p.adjoint(), "Dat 'p' is passive");
}

TEST(MeshErrors, NanCheckNamesTheLoop) {
  SequentialExecutor ex;
  Block b(ex, "grid", {8, 8}, 2);
  Dat<double> u(b, "u", Halo{1}), v(b, "v", Halo{1});
  u.set([](int i, int j, int) { return i == 3 && j == 5 ? 0.5 : 2.0; });
  par_loop_passive("log_unchecked", b, b.interior(), LogKernel{}, arg_dat(u, READ), arg_dat(v, WRITE));
  EXPECT_NO_THROW(ex.wait_all());
  set_nan_check(true);
  par_loop_passive("log", b, b.interior(), LogKernel{}, arg_dat(u, READ), arg_dat(v, WRITE));
  EXPECT_ERROR_HAS(ex.wait_all(), "task 'log'", "NaN written to argument 1", "(3,5,0)");
  set_nan_check(false);
}
