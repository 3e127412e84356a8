// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/common/poisson_problem.hpp — the OPS adjoint Poisson problem (DESIGN.md) on the
// stardiff mesh DSL; shared by stardiff-poisson, its tests and the benchmarks.
//
// Interior nx x ny, halo depth 1, dx = dy = 0.01. On i, j in [-1, n]: x = dx i, y = dy j,
// s = sin(pi x) cos(2 pi y); u = s, f = -5 pi^2 s, ref = s, u2 = s (passive set-up); then
// u = 0 on the interior (passive). Each iteration: Jacobi sweep u -> u2 on the interior,
// then copy u2 -> u. E = sum over the interior of (u - ref)^2 (a SUM reduction).
// Kernels are STARDIFF_HD: from an nvcc translation unit the loops also run on CUDA
// workers (stardiff/mesh/par_loop_cuda.cuh). u, u2, f are active; ref is passive. Known answer (20 x 20, 10 iterations):
// E = 16.5173570176708. Adjoints: Jacobi and copy are linear (adjoint_reads = 0, nothing
// is saved); the error loop's adjoint reads u and ref.
#pragma once
#include <cmath>
#include <memory>

#include "stardiff/adjoint.hpp"
#include "stardiff/mesh.hpp"
#include "stardiff/mesh/hd.hpp"
#include "stardiff/runtime/executor.hpp"
#include "stardiff/runtime/runtime.hpp"

namespace stardiff::poisson {

using mesh::Acc;

struct InitKernel {
  double dx, dy;
  STARDIFF_HD void operator()(Acc<double> u, Acc<double> f, Acc<double> ref, Acc<double> u2, const int* idx) const {
    const double pi = 3.14159265358979323846;
    const double x = dx * idx[0], y = dy * idx[1];
    const double s = std::sin(pi * x) * std::cos(2.0 * pi * y);
    u(0, 0) = s;
    f(0, 0) = -5.0 * pi * pi * s;
    ref(0, 0) = s;
    u2(0, 0) = s;
  }
};

struct ZeroKernel {
  STARDIFF_HD void operator()(Acc<double> u) const { u(0, 0) = 0.0; }
};

struct JacobiKernel {
  double dx2, dy2, inv;  // dx^2, dy^2, 1 / (2 (dx^2 + dy^2))
  static constexpr unsigned adjoint_reads = 0;  // linear: the adjoint reads no primal value
  STARDIFF_HD void operator()(Acc<const double> u, Acc<const double> f, Acc<double> u2) const {
    u2(0, 0) = ((u(-1, 0) + u(1, 0)) * dy2 + (u(0, -1) + u(0, 1)) * dx2 - f(0, 0) * dx2 * dy2) * inv;
  }
  STARDIFF_HD void adjoint(Acc<const double>, Acc<double> u_a1s, Acc<const double>, Acc<double> f_a1s, Acc<const double>,
               Acc<double> u2_a1s) const {
    const double c = u2_a1s(0, 0) * inv;
    u_a1s(-1, 0) += c * dy2;
    u_a1s(1, 0) += c * dy2;
    u_a1s(0, -1) += c * dx2;
    u_a1s(0, 1) += c * dx2;
    f_a1s(0, 0) -= c * dx2 * dy2;
  }
};

struct CopyKernel {
  static constexpr unsigned adjoint_reads = 0;
  STARDIFF_HD void operator()(Acc<const double> src, Acc<double> dst) const { dst(0, 0) = src(0, 0); }
  STARDIFF_HD void adjoint(Acc<const double>, Acc<double> src_a1s, Acc<const double>, Acc<double> dst_a1s) const {
    src_a1s(0, 0) += dst_a1s(0, 0);
  }
};

struct ErrorKernel {
  static constexpr unsigned adjoint_reads = 0b011;  // u and ref
  STARDIFF_HD void operator()(Acc<const double> u, Acc<const double> ref, double* err) const {
    const double d = u(0, 0) - ref(0, 0);
    *err += d * d;
  }
  STARDIFF_HD void adjoint(Acc<const double> u, Acc<double> u_a1s, Acc<const double> ref, const double*,
               const double* err_a1s) const {
    u_a1s(0, 0) += 2.0 * (u(0, 0) - ref(0, 0)) * *err_a1s;
  }
};

class Problem {
 public:
  Problem(Executor& ex, int nx, int ny, int tiles = 0)
      : nx(nx), ny(ny), block(ex, "poisson", {nx, ny}, tiles),
        five(2, {0, 0, -1, 0, 1, 0, 0, -1, 0, 1}, "five_point"), zero(mesh::Stencil::zero(2)),
        u(block, "u", mesh::Halo{1}), u2(block, "u2", mesh::Halo{1}), f(block, "f", mesh::Halo{1}),
        ref(block, "ref", mesh::Halo{1}, {.active = false}), err(block, mesh::ReduceOp::SUM, "E") {}

  // Passive set-up: initial data on the whole range, then u = 0 on the interior.
  void setup() {
    using namespace mesh;
    par_loop_passive("init", block, Range{-1, nx + 1, -1, ny + 1}, InitKernel{dx, dy}, arg_dat(u, zero, WRITE),
                     arg_dat(f, zero, WRITE), arg_dat(ref, zero, WRITE), arg_dat(u2, zero, WRITE), arg_idx());
    par_loop_passive("initial_guess", block, block.interior(), ZeroKernel{}, arg_dat(u, zero, WRITE));
  }
  void iterate(int iters) {
    using namespace mesh;
    const double dx2 = dx * dx, dy2 = dy * dy;
    JacobiKernel jac{dx2, dy2, 1.0 / (2.0 * (dx2 + dy2))};
    for (int it = 0; it < iters; ++it) {
      par_loop("jacobi", block, block.interior(), jac, arg_dat(u, five, READ), arg_dat(f, zero, READ),
               arg_dat(u2, zero, WRITE));
      par_loop("copy", block, block.interior(), CopyKernel{}, arg_dat(u2, zero, READ), arg_dat(u, zero, WRITE));
    }
  }
  // Submits the error loop (E accumulates from 0).
  void submit_error() {
    using namespace mesh;
    err.reset();
    par_loop("error", block, block.interior(), ErrorKernel{}, arg_dat(u, zero, READ), arg_dat(ref, zero, READ),
             arg_reduce(err));
  }
  double run(int iters) {
    setup();
    iterate(iters);
    submit_error();
    block.executor().wait_all();
    return err.value();
  }

  const double dx = 0.01, dy = 0.01;
  int nx, ny;
  mesh::Block block;
  mesh::Stencil five, zero;
  mesh::Dat<double> u, u2, f, ref;
  mesh::Reduction<double> err;
};

}  // namespace stardiff::poisson

namespace stardiff::poisson {

// Adds h to dat d at loop index (i, j) (host side; waits for d's tasks).
inline void perturb(mesh::Dat<double>& d, int i, int j, double h) {
  auto v = d.values();
  d.set([&](int a, int b, int) { return v(a, b) + (a == i && b == j ? h : 0.0); });
}

struct Gradient {
  double E = 0;
  std::size_t tape_bytes = 0, tape_nodes = 0;
  mesh::DatView<double> dE_df, dE_du;
  FixedPointReport fixed_point;  // reverse accumulation only
};

// Records on `tape` (started and stopped here) iters Jacobi iterations and the error loop
// of a set-up problem. With rev, the iterations are a FixedPointAdjoint section: iters - 1
// untaped and the last one recorded on its nested tape (reverse accumulation; the primal
// is the same as iterate(iters)). Returns that section (null without rev); it must outlive
// tape.reverse().
inline std::unique_ptr<FixedPointAdjoint> record_iterations(Tape& tape, Problem& p, int iters,
                                                            const FixedPointOptions* rev = nullptr) {
  tape.start();
  std::unique_ptr<FixedPointAdjoint> fp;
  if (rev) {
    fp = std::make_unique<FixedPointAdjoint>(tape, "jacobi", *rev);
    p.iterate(iters - 1);
    fp->record([&] { p.iterate(1); });
  } else {
    p.iterate(iters);
  }
  p.submit_error();
  tape.stop();
  return fp;
}

// Records iterations + error on a set-up problem, seeds dE = 1, reverses, waits.
inline Gradient record_and_reverse(Problem& p, int iters, SavePolicy policy = SavePolicy::Needed) {
  Tape tape("poisson", policy);
  record_iterations(tape, p, iters);
  tape.seed(p.err, 1.0);
  tape.reverse();
  p.block.executor().wait_all();
  Gradient g;
  g.E = p.err.value();
  g.tape_bytes = tape.bytes();
  g.tape_nodes = tape.nodes();
  g.dE_df = p.f.adjoint();
  g.dE_du = p.u.adjoint();
  return g;
}

// Reverse accumulation on a set-up problem (record_iterations with opts); seeds dE = 1,
// reverses, waits. tape_bytes: the outer tape's checkpoints plus the section's bytes (its
// report).
inline Gradient rev_acc_gradient(Problem& p, int iters, const FixedPointOptions& opts,
                                 SavePolicy policy = SavePolicy::Needed) {
  Tape tape("poisson", policy);
  const std::unique_ptr<FixedPointAdjoint> fp = record_iterations(tape, p, iters, &opts);
  tape.seed(p.err, 1.0);
  tape.reverse();
  p.block.executor().wait_all();
  Gradient g;
  g.E = p.err.value();
  g.fixed_point = fp->report();
  g.tape_bytes = tape.bytes() + fp->bytes();
  g.tape_nodes = tape.nodes();
  g.dE_df = p.f.adjoint();
  g.dE_du = p.u.adjoint();
  return g;
}

}  // namespace stardiff::poisson
