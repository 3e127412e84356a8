// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_adjoint_external_cases.hpp — external-function cases shared by the unit and
// StarPU tests: a batched tridiagonal solve along an axis with J = <w, x> (x's adjoint seeded
// with w), and a sparse 2-D solve (5-point matrix, values as a 3-component dat) with J = <w, x>.
#pragma once
#include <cmath>
#include <vector>

#include "stardiff/adjoint.hpp"
#include "stardiff/adjoint/sparse_solve.hpp"
#include "stardiff/adjoint/tridiag.hpp"
#include "stardiff/mesh.hpp"
#include "five_point_pattern.hpp"

namespace stardiff::ext_cases {

using mesh::Dat;
using mesh::DatView;

// Perturbation of one input at one point (which: 'a', 'b', 'c', 'd'; 0: none).
struct Perturb {
  char which = 0;
  int i = 0, j = 0, k = 0;
  double h = 0;
};

inline double w_of(int i, int j, int k) { return std::cos(0.7 * i + 1.3 * j - 0.4 * k) + 0.1 * i; }

struct TriResult {
  double J = 0;
  DatView<double> x, da, db, dc, dd;
};

inline TriResult run_tridiag(Executor& ex, std::vector<int> size, int tiles, int axis, bool inplace, bool recompute,
                             Perturb p = {}, bool adjoint = true) {
  mesh::Block block(ex, "tri", size, tiles);
  mesh::Halo halo(1);
  Dat<double> a(block, "a", halo), b(block, "b", halo), c(block, "c", halo), d(block, "d", halo),
      x(block, "x", halo);
  auto bump = [&](char w, int i, int j, int k) { return p.which == w && p.i == i && p.j == j && p.k == k ? p.h : 0.0; };
  a.set([&](int i, int j, int k) { return 0.4 * std::sin(i + 2.0 * j + 3.0 * k) + bump('a', i, j, k); });
  b.set([&](int i, int j, int k) { return 3.0 + std::cos(0.5 * i - j + k) + bump('b', i, j, k); });
  c.set([&](int i, int j, int k) { return -0.5 * std::cos(i * j + 0.3 * k) + bump('c', i, j, k); });
  d.set([&](int i, int j, int k) { return std::sin(0.3 * i) + 0.2 * j - 0.1 * k + bump('d', i, j, k); });
  x.set([](int, int, int) { return -9.0; });
  Dat<double>& out = inplace ? d : x;
  Tape tape("tridiag");
  if (adjoint) tape.start();
  tridiag_solve("tridiag", axis, a, b, c, d, out, recompute);
  tape.stop();
  ex.wait_all();
  TriResult r;
  r.x = out.values();
  const int nk = size.size() > 2 ? size[2] : 1;
  for (int k = 0; k < nk; ++k)
    for (int j = 0; j < size[1]; ++j)
      for (int i = 0; i < size[0]; ++i) r.J += w_of(i, j, k) * r.x(i, j, k);
  if (!adjoint) return r;
  tape.seed(out, [&](int i, int j, int k, int) {
    const bool in = i >= 0 && i < size[0] && j >= 0 && j < size[1] && k >= 0 && k < nk;
    return in ? w_of(i, j, k) : 0.0;
  });
  tape.reverse();
  ex.wait_all();
  r.da = a.adjoint();
  r.db = b.adjoint();
  r.dc = c.adjoint();
  r.dd = d.adjoint();
  return r;
}

// Sparse case: n x n grid, M = I + s L with L the 5-point operator with weights from
// 3-component values (diag, coupling to i-1, coupling to j-1) held by `vals`.
inline sparse::CscMatrix32 grid_pattern(int n, std::vector<SparseSolve::Entry>& where) {
  return apps::five_point_lower(n, where);
}

struct SparseResult {
  double J = 0;
  DatView<double> x, dvals, db;
  int factorizations = 0;
};

// Solves `steps` times in a chain (b -> x -> x ...), J = <w, x_final>.
inline SparseResult run_sparse(Executor& ex, int n, int tiles, int steps, bool inplace, bool recompute,
                               double hval = 0, int pi = 0, int pj = 0, int pc = 0) {
  mesh::Block block(ex, "grid", {n, n}, tiles);
  mesh::DatOptions vo;
  vo.dim = 3;
  Dat<double> vals(block, "M", mesh::Halo{}, vo), b(block, "b"), x(block, "x");
  vals.set_components([&](int i, int j, int, int c) {
    const double base = c == 0 ? 4.5 + 0.1 * std::sin(i + j) : (c == 1 ? (i > 0 ? -1.0 - 0.05 * j : 0.0)
                                                                        : (j > 0 ? -1.0 + 0.03 * i : 0.0));
    return base + (i == pi && j == pj && c == pc ? hval : 0.0);
  });
  b.set([&](int i, int j, int) { return std::sin(0.4 * i + 0.9 * j) + 0.5; });
  x.set([](int, int, int) { return 0.0; });
  std::vector<SparseSolve::Entry> where;
  auto A = grid_pattern(n, where);
  SparseSolve solver("ldlt", A, where);
  Tape tape("sparse");
  tape.start();
  Dat<double>& out = inplace ? b : x;
  for (int s = 0; s < steps; ++s) {
    if (inplace || s == 0) solver.solve(vals, b, out, recompute);
    else solver.solve(vals, out, out, recompute);
  }
  tape.stop();
  ex.wait_all();
  SparseResult r;
  r.x = out.values();
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) r.J += w_of(i, j, 0) * r.x(i, j);
  tape.seed(out, [&](int i, int j, int, int) { return w_of(i, j, 0); });
  tape.reverse();
  ex.wait_all();
  r.dvals = vals.adjoint();
  r.db = b.adjoint();
  r.factorizations = solver.factorizations();
  return r;
}

}  // namespace stardiff::ext_cases
