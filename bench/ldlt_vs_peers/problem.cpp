// SPDX-License-Identifier: LGPL-2.1-or-later
// bench/ldlt_vs_peers/problem.cpp — the benchmark's matrices: Matrix Market input, the
// 3-D Laplacian generator, and the derived data (the file's own pattern for the peers, its
// full pattern, b = A * 1, ||A||_inf).
#include "problem.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace stardiff;
using namespace stardiff::sparse;

namespace ldlt_vs_peers {

namespace {

void finish_problem(Problem& p) {
  const std::int32_t n = p.A.n_cols;
  std::vector<double> ones(std::size_t(n), 1.0);
  p.b.resize(std::size_t(n));
  multiply(p.A, ones.data(), p.b.data());
  p.anorm = norm_inf(p.A);
  const CscMatrix32& A = p.peer_matrix();
  // Full CSC: column j holds the upper part (row j of the lower triangle) then the lower part.
  std::vector<std::int32_t> rows, cols;
  std::vector<double> vals;
  rows.reserve(2 * std::size_t(A.nnz()));
  cols.reserve(rows.capacity());
  vals.reserve(rows.capacity());
  for (std::int32_t j = 0; j < n; ++j)
    for (std::int32_t q = A.col_ptr[j]; q < A.col_ptr[j + 1]; ++q) {
      std::int32_t i = A.row_idx[q];
      rows.push_back(i);
      cols.push_back(j);
      vals.push_back(A.values[q]);
      if (i != j) {
        rows.push_back(j);
        cols.push_back(i);
        vals.push_back(A.values[q]);
      }
    }
  CscMatrix32 F = from_triplets(n, n, rows, cols, vals, false);
  p.fp = std::move(F.col_ptr);
  p.fi = std::move(F.row_idx);
  p.fx = std::move(F.values);
}

std::string basename_no_ext(const std::string& path) {
  std::string s = path.substr(path.find_last_of('/') + 1);
  for (const char* ext : {".gz", ".mtx"})
    if (s.size() > std::strlen(ext) && s.compare(s.size() - std::strlen(ext), std::strlen(ext), ext) == 0)
      s.resize(s.size() - std::strlen(ext));
  return s;
}

}  // namespace

Problem matrix_problem(const std::string& path) {
  Problem p;
  ReadOptions own;
  own.insert_diagonal = false;
  p.A_file = read_matrix_market(path, own);
  p.inserted_diagonal = p.A_file.n_cols;
  for (std::int32_t j = 0; j < p.A_file.n_cols; ++j)
    p.inserted_diagonal -= p.A_file.col_ptr[j] < p.A_file.col_ptr[j + 1] && p.A_file.row_idx[p.A_file.col_ptr[j]] == j;
  if (p.inserted_diagonal) p.A = read_matrix_market(path);  // stardiff's input, as the reader gives it
  else p.A = std::move(p.A_file), p.A_file = CscMatrix32{};
  p.name = basename_no_ext(path);
  finish_problem(p);
  return p;
}

Problem laplacian3d(int N) {
  Problem p;
  p.name = "laplace3d_" + std::to_string(N);
  p.laplacian = true;
  const std::int64_t n64 = std::int64_t(N) * N * N;
  require(N >= 2 && n64 < (std::int64_t(1) << 30), "--laplacian: N must be in [2, 1000]");
  const std::int32_t n = std::int32_t(n64);
  std::vector<std::int32_t> r, c;
  std::vector<double> v;
  r.reserve(std::size_t(n) * 4);
  c.reserve(r.capacity());
  v.reserve(r.capacity());
  auto id = [N](int x, int y, int z) { return std::int32_t((std::int64_t(z) * N + y) * N + x); };
  for (int z = 0; z < N; ++z)
    for (int y = 0; y < N; ++y)
      for (int x = 0; x < N; ++x) {
        std::int32_t k = id(x, y, z);
        r.push_back(k), c.push_back(k), v.push_back(6.0);
        if (x + 1 < N) r.push_back(id(x + 1, y, z)), c.push_back(k), v.push_back(-1.0);
        if (y + 1 < N) r.push_back(id(x, y + 1, z)), c.push_back(k), v.push_back(-1.0);
        if (z + 1 < N) r.push_back(id(x, y, z + 1)), c.push_back(k), v.push_back(-1.0);
      }
  p.A = from_triplets(n, n, r, c, v, true);
  p.A.name = p.name;
  finish_problem(p);
  return p;
}

double relres_of(const Problem& p, const std::vector<double>& x) {
  const std::size_t n = p.b.size();
  if (x.size() != n) return INFINITY;
  std::vector<double> ax(n);
  multiply(p.A, x.data(), ax.data());
  double rn = 0, xn = 0, bn = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) return INFINITY;
    rn = std::max(rn, std::abs(p.b[i] - ax[i]));
    xn = std::max(xn, std::abs(x[i]));
    bn = std::max(bn, std::abs(p.b[i]));
  }
  double d = p.anorm * xn + bn;
  return d > 0 ? rn / d : 0.0;
}

}  // namespace ldlt_vs_peers
