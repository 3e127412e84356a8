// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/adjoint/sparse_solve.hpp — a sparse symmetric solve x = M^{-1} b with sparse::Ldlt
// as an external function whose adjoint reuses the factors.
//
// Contract:
//  * SparseSolve(name, pattern, where) fixes M's pattern (symmetric_lower CSC; its values are
//    ignored) and, per stored entry e, where its value lives in a values dat: point
//    (i, j, k), component c. Unknown p of b and x is the p-th interior point of their dat in
//    natural order (x fastest, then y, then z); pattern.n_cols equals their interior points.
//  * solve(values, b, x) runs one task (all tiles; tasks of one SparseSolve in submission
//    order): M's values gathered from `values`; the analysis ran once (constructor), the
//    numeric factorization runs only when the gathered values differ bitwise from those
//    last factorized; x = M^{-1} b (refined). &x == &b solves in place. values, b, x: one
//    block, b and x one component and equal size and base.
//  * Adjoint (recorded when a tape is active): g = M^{-1} xbar with the same factors (M
//    symmetric), xbar consumed, bbar += g (in place: bbar = g), and on M's pattern
//    Mbar = -g x^T: values_a1s at entry (r, q) -= g_r x_q + g_q x_r (r != q), g_r x_r (r = q).
//    The caller maps values_a1s to its parameters. recompute: execute_external_recompute.
//  * A singular factorization or non-finite values fail the task (Error from wait_all).
//  * The SparseSolve must outlive its tasks and the reversal of tapes that recorded it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "stardiff/mesh/dat.hpp"
#include "stardiff/sparse/csc_matrix.hpp"
#include "stardiff/sparse/ldlt.hpp"

namespace stardiff {

class SparseSolve {
 public:
  struct Entry {
    int i = 0, j = 0, k = 0, c = 0;
  };
  SparseSolve(std::string name, sparse::CscMatrix32 pattern, std::vector<Entry> where,
              sparse::LdltOptions opts = {});
  ~SparseSolve();
  SparseSolve(const SparseSolve&) = delete;
  SparseSolve& operator=(const SparseSolve&) = delete;

  void solve(mesh::Dat<double>& values, mesh::Dat<double>& b, mesh::Dat<double>& x, bool recompute = false);
  // Counters (read after wait_all): numeric factorizations and solves run so far.
  int factorizations() const;
  int solves() const;
  const sparse::Ldlt& ldlt() const;

  struct State;

 private:
  std::unique_ptr<State> s_;
};

}  // namespace stardiff
