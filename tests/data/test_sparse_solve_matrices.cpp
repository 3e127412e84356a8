// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/data/test_sparse_solve_matrices.cpp — Ldlt on every matrix of
// $STARDIFF_SHARED_DATA/matrices (skipped when absent).
//
// Each matrix is solved (b = A x_true) with relres = ||Ax-b||inf/||b||inf <= 1e-10 or
// reported singular; the inertia equals the independent evidence of SOURCES.md where it
// is known (SPD: all positive; bfw398b: all negative; sqd_*: quasi-definite counts;
// KKT aug3dcqp/tuma2: #negative = #constraints = #absent diagonal entries); both
// orderings (AMD, METIS) give the same inertia; refactorizing with the same values
// reproduces the factor bitwise; where the unpivoted factorization was kept, threshold
// pivoting alone gives the same inertia. bloweybq (PSD, singular to working precision) may be
// reported with 0 or 1 zero eigenvalue, never a negative one, and always with rcond() < eps;
// the matrices known nonsingular have rcond() > 1e-11. The quasi-definite sqd_* keep the
// diagonal pivots of the fill-reducing order: no delayed column, relres <= 1e-12.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>

#include "stardiff/sparse/csc_matrix.hpp"
#include "stardiff/sparse/ldlt.hpp"
#include "stardiff/sparse/matrix_market.hpp"
#include "sparse_residual.hpp"

using namespace stardiff;
using namespace stardiff::sparse;
using stardiff::testing::relres;
namespace fs = std::filesystem;

namespace {
fs::path data_dir() {
  const char* d = std::getenv("STARDIFF_SHARED_DATA");
  return d ? fs::path(d) / "matrices" : fs::path();
}

struct Expect {
  std::int64_t pos, neg, zero;  // -1: unknown
};

// From SOURCES.md (independent evidence) and the structure of the KKT systems.
const std::map<std::string, Expect> kKnown = {
    {"1138_bus", {1138, 0, 0}},       {"bcsstk04", {132, 0, 0}},   {"bcsstk14", {1806, 0, 0}},
    {"bcsstk18", {11948, 0, 0}},      {"bfw398b", {0, 398, 0}},    {"bodyy4", {17546, 0, 0}},
    {"fv1", {9604, 0, 0}},            {"nos4", {100, 0, 0}},       {"s3rmt3m3", {5357, 0, 0}},
    {"ted_B", {10605, 0, 0}},         {"sqd_aug2d_2x2_K0", {10000, 20200, 0}},
    {"sqd_cvxqp3_m_2x2_K10", {2750, 3000, 0}}, {"aug3dcqp", {27543, 8000, 0}},
    {"tuma2", {7515, 5477, 0}},
};

}  // namespace

TEST(SparseSolveMatrices, EveryMatrixSolvedOrReportedSingular) {
  fs::path dir = data_dir();
  if (dir.empty() || !fs::exists(dir)) GTEST_SKIP() << "no shared data";
  int seen = 0;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().string().ends_with(".mtx.gz") || e.path().string().ends_with(".mtx")) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::string name = f.filename().string();
    name = name.substr(0, name.find(".mtx"));
    SCOPED_TRACE(name);
    auto A = read_matrix_market(f.string());
    const int n = A.n_cols;
    std::vector<double> xt(n), b(n);
    for (int i = 0; i < n; ++i) xt[i] = 1.0 + std::sin(0.1 * i);
    multiply(A, xt.data(), b.data());
    Inertia first{};
    for (auto ord : {Ordering::Amd, Ordering::Metis}) {
      Ldlt l({.ordering = ord});
      l.analyze(A);
      auto fi = l.factorize(A);
      EXPECT_EQ(fi.inertia.pos + fi.inertia.neg + fi.inertia.zero, n);
      EXPECT_EQ(fi.singular, fi.inertia.zero > 0);
      auto x = l.solve(b);
      const double rr = relres(A, x, b);
      if (!fi.singular) EXPECT_LE(rr, 1e-10) << to_string(ord);
      else EXPECT_LE(l.solve_info().backward_error, 1e-10) << "singular but consistent rhs";
      if (fi.pivoting == Pivoting::None) {  // the unpivoted factorization was kept: threshold pivoting agrees
        Ldlt t({.ordering = ord, .try_unpivoted = false});
        t.analyze(A);
        const auto ft = t.factorize(A);
        EXPECT_EQ(ft.pivoting, Pivoting::Threshold);
        EXPECT_EQ(ft.inertia.pos, fi.inertia.pos) << to_string(ord);
        EXPECT_EQ(ft.inertia.neg, fi.inertia.neg) << to_string(ord);
        EXPECT_EQ(ft.inertia.zero, fi.inertia.zero) << to_string(ord);
        EXPECT_LE(fi.growth, LdltOptions{}.growth_limit);
      }
      auto it = kKnown.find(name);
      if (fi.singular) EXPECT_EQ(l.rcond(), 0.0);
      if (it != kKnown.end()) {
        EXPECT_FALSE(fi.singular);
        EXPECT_GT(l.rcond(), 1e-11) << to_string(ord);  // nonsingular (SOURCES.md): well above eps
        EXPECT_EQ(fi.inertia.pos, it->second.pos) << to_string(ord);
        EXPECT_EQ(fi.inertia.neg, it->second.neg) << to_string(ord);
        EXPECT_EQ(fi.inertia.zero, it->second.zero) << to_string(ord);
      }
      if (name == "bloweybq") {
        // PSD and rank-deficient by one to working precision: whether the null direction
        // shows up as a zero pivot depends on the ordering; no negative eigenvalue may.
        EXPECT_EQ(fi.inertia.neg, 0);
        EXPECT_LE(fi.inertia.zero, 1);
        // and, whatever the pivots showed, the condition estimate says singular
        EXPECT_LT(l.rcond(), std::numeric_limits<double>::epsilon()) << to_string(ord);
        continue;
      }
      if (ord == Ordering::Amd) {
        first = fi.inertia;
        const auto h = l.factor_hash();
        l.factorize(A);
        EXPECT_EQ(l.factor_hash(), h) << "refactorization is not reproducible";
      } else {
        EXPECT_EQ(fi.inertia.pos, first.pos);
        EXPECT_EQ(fi.inertia.neg, first.neg);
        EXPECT_EQ(fi.inertia.zero, first.zero);
      }
    }
    ++seen;
  }
  EXPECT_GE(seen, 10);
}

TEST(SparseSolveMatrices, QuasiDefiniteMatricesTakeDiagonalPivots) {
  // The SQD matrices ([[H, B^T], [B, -G]], H and G positive definite) have an LDL^T with
  // 1x1 pivots in any symmetric order, each of its diagonal entry's sign: stardiff keeps
  // the diagonal pivots of the fill-reducing order (one attempt, no delayed column, no 2x2
  // pivot), so the inertia is (#positive diagonal entries, #negative ones, 0) = the
  // sizes of the (1,1) and (2,2) blocks, and the refined solution has relres <= 1e-12.
  fs::path dir = data_dir();
  if (dir.empty() || !fs::exists(dir)) GTEST_SKIP() << "no shared data";
  int seen = 0;
  for (const char* name : {"sqd_aug2d_2x2_K0", "sqd_cvxqp3_m_2x2_K10"}) {
    const fs::path f = dir / (std::string(name) + ".mtx.gz");
    if (!fs::exists(f)) continue;
    SCOPED_TRACE(name);
    ++seen;
    auto A = read_matrix_market(f.string());
    const int n = A.n_cols;
    std::int64_t dpos = 0, dneg = 0;
    for (int j = 0; j < n; ++j)
      for (int k = A.col_ptr[j]; k < A.col_ptr[j + 1]; ++k)
        if (A.row_idx[k] == j) (A.values[k] > 0 ? dpos : dneg) += A.values[k] != 0.0;
    ASSERT_EQ(dpos + dneg, n);  // no zero diagonal entry
    EXPECT_EQ(dpos, kKnown.at(name).pos);
    EXPECT_EQ(dneg, kKnown.at(name).neg);
    std::vector<double> xt(n), b(n);
    for (int i = 0; i < n; ++i) xt[i] = 1.0 + std::sin(0.1 * i);
    multiply(A, xt.data(), b.data());
    Ldlt l;
    l.analyze(A);
    const auto fi = l.factorize(A);
    EXPECT_EQ(fi.attempts, 1);
    EXPECT_EQ(fi.delayed, 0);
    EXPECT_EQ(fi.two_by_two, 0);
    EXPECT_EQ(fi.static_pivots, 0);
    EXPECT_EQ(fi.inertia.pos, dpos);
    EXPECT_EQ(fi.inertia.neg, dneg);
    EXPECT_EQ(fi.inertia.zero, 0);
    const auto x = l.solve(b);
    EXPECT_LE(relres(A, x, b), 1e-12);
    EXPECT_FALSE(l.solve_info().refactorized);
  }
  if (seen == 0) GTEST_SKIP() << "no SQD matrix in the shared data";
}

TEST(SparseSolveMatrices, Stokes64NullModesAndFgmres) {
  fs::path f = data_dir() / "stokes64.mtx.gz";
  if (!fs::exists(f)) GTEST_SKIP() << "no stokes64";
  auto A = read_matrix_market(f.string());
  Ldlt l;
  l.analyze(A);
  auto fi = l.factorize(A);
  // Saddle point with pressure null modes: singular, 8448 + / 4096 - / 2 zero under
  // both orderings (the unpivoted RCM LDL^T of SOURCES.md saw a 1.5e-13 pivot).
  EXPECT_TRUE(fi.singular);
  EXPECT_EQ(fi.inertia.zero, 2);
  EXPECT_EQ(fi.inertia.pos, 8448);
  EXPECT_EQ(fi.delayed, 0);  // each pressure behind its own velocity partner (partnered order)
  EXPECT_GT(fi.two_by_two, 0);
  std::vector<double> xt(A.n_cols, 1.0), b(A.n_cols);
  multiply(A, xt.data(), b.data());
  auto x = l.solve(b);
  EXPECT_LE(l.solve_info().backward_error, 1e-14);
  EXPECT_LE(relres(A, x, b), 1e-10);
  // refinement stalls on the static pivots; FGMRES stops once its residual estimate means
  // an eps backward error, well before its restart length (30)
  EXPECT_GT(l.solve_info().fgmres_iters, 0);
  EXPECT_LT(l.solve_info().fgmres_iters, 15);
}
