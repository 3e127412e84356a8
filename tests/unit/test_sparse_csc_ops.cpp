// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_sparse_csc_ops.cpp — CscMatrix construction and operations against a
// dense reference: from_triplets (sorting, duplicate sums, mirroring, an entry given in
// both triangles, errors), y = A x
// for symmetric-lower and general matrices, ||A||_inf of the full matrix, and the checked
// narrowing of int64-indexed matrices (to_csc32).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "stardiff/runtime/error.hpp"
#include "sparse_wide.hpp"
#include "stardiff/sparse/csc_matrix.hpp"

using namespace stardiff;
using namespace stardiff::sparse;

namespace {
struct Random {
  std::int32_t n_rows, n_cols;
  std::vector<std::int32_t> r, c;
  std::vector<double> v;
  std::vector<double> dense;  // column-major, the matrix the triplets describe
};

Random random_triplets(std::int32_t m, std::int32_t n, int nt, bool sym, unsigned seed) {
  std::mt19937 rng(seed);
  Random t{m, n, {}, {}, {}, std::vector<double>(std::size_t(m) * n, 0.0)};
  for (int k = 0; k < nt; ++k) {
    std::int32_t i = rng() % m, j = rng() % n;
    if (sym && i != j && ((i + j) % 2 == 0) != (i > j)) std::swap(i, j);  // one triangle per entry
    double v = std::uniform_real_distribution<double>(-2, 2)(rng);
    if (k % 7 == 0) v = 0.0;  // explicit zeros
    t.r.push_back(i);
    t.c.push_back(j);
    t.v.push_back(v);
    t.dense[std::size_t(j) * m + i] += v;
    if (sym && i != j) t.dense[std::size_t(i) * m + j] += v;
  }
  return t;
}
}  // namespace

TEST(SparseCscOps, FromTripletsGeneralMatchesDense) {
  Random t = random_triplets(9, 7, 80, false, 1);
  CscMatrix32 A = from_triplets(9, 7, t.r, t.c, t.v, false);
  EXPECT_FALSE(A.symmetric_lower);
  ASSERT_EQ(A.col_ptr.size(), 8u);
  std::vector<double> d(63, 0.0);
  for (int j = 0; j < 7; ++j)
    for (int p = A.col_ptr[j]; p < A.col_ptr[j + 1]; ++p) {
      if (p > A.col_ptr[j]) {
        EXPECT_LT(A.row_idx[p - 1], A.row_idx[p]);
      }
      d[std::size_t(j) * 9 + A.row_idx[p]] = A.values[p];
    }
  for (int k = 0; k < 63; ++k) EXPECT_NEAR(d[k], t.dense[k], 1e-14);
  // y = A x against the dense product.
  std::vector<double> x(7), y(9);
  for (int j = 0; j < 7; ++j) x[j] = std::cos(j + 0.5);
  multiply(A, x.data(), y.data());
  for (int i = 0; i < 9; ++i) {
    double s = 0;
    for (int j = 0; j < 7; ++j) s += t.dense[std::size_t(j) * 9 + i] * x[j];
    EXPECT_NEAR(y[i], s, 1e-13);
  }
}

TEST(SparseCscOps, FromTripletsSymmetricMirrorsAndSums) {
  Random t = random_triplets(11, 11, 120, true, 2);
  CscMatrix32 A = from_triplets(11, 11, t.r, t.c, t.v, true);
  EXPECT_TRUE(A.symmetric_lower);
  for (int j = 0; j < 11; ++j)
    for (int p = A.col_ptr[j]; p < A.col_ptr[j + 1]; ++p) {
      EXPECT_GE(A.row_idx[p], j);
      EXPECT_NEAR(A.values[p], t.dense[std::size_t(j) * 11 + A.row_idx[p]], 1e-14);
    }
  std::vector<double> x(11), y(11);
  for (int j = 0; j < 11; ++j) x[j] = 1.0 + 0.1 * j;
  multiply(A, x.data(), y.data());
  double nrm = 0;
  for (int i = 0; i < 11; ++i) {
    double s = 0, rs = 0;
    for (int j = 0; j < 11; ++j) {
      s += t.dense[std::size_t(j) * 11 + i] * x[j];
      rs += std::abs(t.dense[std::size_t(j) * 11 + i]);
    }
    EXPECT_NEAR(y[i], s, 1e-13);
    nrm = std::max(nrm, rs);
  }
  EXPECT_NEAR(norm_inf(A), nrm, 1e-13);
  // ||S A S||_inf against the dense one
  std::vector<double> sc(11);
  for (int i = 0; i < 11; ++i) sc[i] = std::pow(2.0, i % 5 - 2);
  double snrm = 0;
  for (int i = 0; i < 11; ++i) {
    double rs = 0;
    for (int j = 0; j < 11; ++j) rs += std::abs(sc[i] * t.dense[std::size_t(j) * 11 + i] * sc[j]);
    snrm = std::max(snrm, rs);
  }
  EXPECT_NEAR(norm_inf(A, sc), snrm, 1e-13);
  EXPECT_THROW(norm_inf(A, std::vector<double>(10, 1.0)), Error);
}

TEST(SparseCscOps, KnownSmallMatrix) {
  // [[4, -1, 0], [-1, 4, -2], [0, -2, 5]] as lower triplets, (2,1) given twice (-0.5 each).
  CscMatrix32 A = from_triplets(3, 3, {0, 1, 1, 1, 2, 2}, {0, 0, 0, 1, 1, 2}, {4, -0.5, -0.5, 4, -2, 5}, true);
  EXPECT_EQ(A.nnz(), 5);
  EXPECT_EQ(A.col_ptr, (std::vector<std::int32_t>{0, 2, 4, 5}));
  EXPECT_EQ(A.row_idx, (std::vector<std::int32_t>{0, 1, 1, 2, 2}));
  double x[3] = {1, 1, 1}, y[3];
  multiply(A, x, y);
  EXPECT_EQ(y[0], 3.0);
  EXPECT_EQ(y[1], 1.0);
  EXPECT_EQ(y[2], 3.0);
  EXPECT_EQ(norm_inf(A), 7.0);
}

TEST(SparseCscOps, FromTripletsSymmetricEntryInBothTrianglesIsAnError) {
  // [[2, 1], [1, 2]] given in full: summing both triangles would give the singular [[2, 2], [2, 2]].
  try {
    from_triplets(2, 2, {0, 1, 0, 1}, {0, 0, 1, 1}, {2.0, 1.0, 1.0, 2.0}, true);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("entry 1 (1, 0) and entry 2 (0, 1)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("both triangles"), std::string::npos) << msg;
  }
  // A third triplet of the entry, after two in one triangle, is caught as well.
  EXPECT_THROW(from_triplets(3, 3, {2, 2, 0}, {0, 0, 2}, {1.0, 1.0, 1.0}, true), Error);
  // Duplicates within one triangle are summed; the upper triangle alone is mirrored.
  CscMatrix32 A = from_triplets(2, 2, {0, 0, 0, 1}, {0, 1, 1, 1}, {2.0, 0.5, 0.5, 2.0}, true);
  EXPECT_EQ(A.row_idx, (std::vector<std::int32_t>{0, 1, 1}));
  EXPECT_EQ(A.values, (std::vector<double>{2.0, 1.0, 2.0}));
  // Unsymmetric storage keeps both: (0, 1) and (1, 0) are different entries there.
  EXPECT_EQ(from_triplets(2, 2, {0, 1, 0, 1}, {0, 0, 1, 1}, {2.0, 1.0, 1.0, 2.0}, false).nnz(), 4);
}

TEST(SparseCscOps, FromTripletsRejectsBadInput) {
  EXPECT_THROW(from_triplets(2, 2, {2}, {0}, {1.0}, false), Error);
  EXPECT_THROW(from_triplets(2, 2, {0}, {-1}, {1.0}, false), Error);
  EXPECT_THROW(from_triplets(2, 2, {0}, {0}, {NAN}, false), Error);
  EXPECT_THROW(from_triplets(2, 2, {0}, {0}, {INFINITY}, true), Error);
  EXPECT_THROW(from_triplets(2, 3, {0}, {0}, {1.0}, true), Error);
  EXPECT_THROW(from_triplets(2, 2, {0, 1}, {0}, {1.0}, false), Error);
  CscMatrix32 E = from_triplets(0, 0, {}, {}, {}, true);
  EXPECT_EQ(E.nnz(), 0);
  EXPECT_EQ(norm_inf(E), 0.0);
}

namespace {
using stardiff::testing::widen;

std::string error_of(const CscMatrix64& A) {
  try {
    to_csc32(A);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(SparseCscOps, ToCsc32KeepsTheMatrix) {
  Random t = random_triplets(40, 40, 300, true, 5);
  CscMatrix32 A = from_triplets(t.n_rows, t.n_cols, t.r, t.c, t.v, true);
  CscMatrix32 B = to_csc32(widen(A));
  EXPECT_EQ(B.n_rows, A.n_rows);
  EXPECT_EQ(B.n_cols, A.n_cols);
  EXPECT_EQ(B.col_ptr, A.col_ptr);
  EXPECT_EQ(B.row_idx, A.row_idx);
  EXPECT_EQ(B.values, A.values);
  EXPECT_TRUE(B.symmetric_lower);
  EXPECT_EQ(B.name, "wide");
}

TEST(SparseCscOps, ToCsc32RejectsWhatDoesNotFit) {
  CscMatrix64 big;  // dimensions beyond int32: rejected before anything is allocated
  big.n_rows = big.n_cols = std::int64_t(3) << 30;
  EXPECT_NE(error_of(big).find("do not fit in 32-bit indices"), std::string::npos) << error_of(big);
  CscMatrix64 many;  // nnz beyond int32 (checked before the arrays' sizes)
  many.n_rows = many.n_cols = 1;
  many.col_ptr = {0, std::int64_t(3) << 30};
  EXPECT_NE(error_of(many).find("stored entries do not fit"), std::string::npos) << error_of(many);

  CscMatrix32 A = from_triplets(3, 3, {0, 1, 2, 2}, {0, 0, 1, 2}, {4.0, 1.0, 1.0, 4.0}, true);
  CscMatrix64 W = widen(A);
  EXPECT_EQ(error_of(W), "");
  CscMatrix64 bad = W;
  bad.row_idx[1] = -1;
  EXPECT_NE(error_of(bad).find("row index -1 (entry 1)"), std::string::npos) << error_of(bad);
  bad = W;
  bad.row_idx[2] = std::int64_t(1) << 40;
  EXPECT_NE(error_of(bad).find("outside the 3 rows"), std::string::npos) << error_of(bad);
  bad = W;
  bad.col_ptr[1] = 3, bad.col_ptr[2] = 2;
  EXPECT_NE(error_of(bad).find("col_ptr[2]"), std::string::npos) << error_of(bad);
  bad = W;
  bad.values.pop_back();
  EXPECT_NE(error_of(bad).find("disagree"), std::string::npos) << error_of(bad);
  bad = W;
  bad.col_ptr.pop_back();
  EXPECT_NE(error_of(bad).find("col_ptr has 3 entries"), std::string::npos) << error_of(bad);
  bad = W;
  bad.n_rows = -1;
  EXPECT_NE(error_of(bad).find("dimensions -1 x 3"), std::string::npos) << error_of(bad);
}
