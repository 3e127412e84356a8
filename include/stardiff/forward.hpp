// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/forward.hpp — forward-mode AD: dual numbers, column colouring, sparse Jacobians.
//
//   forward/dual.hpp            Dual<N, T>: value + N partials, arithmetic, elementary
//                               functions, nesting (Dual<M, Dual<N>>), __host__ __device__
//   forward/coloring.hpp        SparsityPattern, distance-2 column colouring (natural, lf,
//                               sl, id, best), validity, seed matrix, decompression
//   forward/row_range.hpp       RowRange, the residual functor contract (C++17, CUDA-safe)
//   forward/sparse_jacobian.hpp SparseJacobian<F, W>: residual and Jacobian as tasks
//   (CUDA: codelets/cuda/forward/sparse_jacobian.cuh, templates a user .cu instantiates)
//
// A user writes the residual once, templated on the scalar type:
//
//   struct Residual {
//     const Data* d;                                  // anything the rows need
//     template <class S>
//     void operator()(RowRange rows, const S* x, S* f) const {
//       using std::exp;                               // double and Dual both resolve
//       for (std::int32_t i = rows.begin; i < rows.end; ++i) f[i] = ...x[j]...;
//     }
//   };
//   SparsityPattern p = pattern_from_coo(m, n, rows, cols);     // (i, j): F_i reads x_j
//   SparseJacobian<Residual, 8> jac(p, Residual{&data});        // colours (best order)
//   jac.jacobian(exec, x, csc_values, f);                       // J in p's CSC layout, F
//   PatternCheck chk = jac.verify_pattern(exec, x);             // in tests: F keeps to p
//   SparseJacobian<Residual, 8> fast(p, Residual{&data}, {.mode = JacobianMode::RowLocal});
//
// JacobianMode::Colored follows ExaPF (one seed direction per colour, W colours per pass,
// rows without a non-zero of the pass's colours skipped); JacobianMode::RowLocal seeds each
// row's own non-zeros and needs no colouring: fewest dual evaluations, usually fastest.
#pragma once
#include "stardiff/forward/coloring.hpp"
#include "stardiff/forward/dual.hpp"
#include "stardiff/forward/row_range.hpp"
#include "stardiff/forward/sparse_jacobian.hpp"
