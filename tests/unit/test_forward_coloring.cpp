// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_forward_coloring.cpp — distance-2 column colouring: validity and counts
// (natural, lf, sl, id, best; never below the row lower bound) on patterns with known
// optimal counts and on random patterns, an invalid colouring detected, seed matrix and
// decompression of B = J·S, pattern construction and bad input (stardiff::Error).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "support/forward/bratu_pattern.hpp"
#include "stardiff/forward/coloring.hpp"
#include "stardiff/runtime/error.hpp"

using namespace stardiff;
using namespace stardiff::forward;

namespace {

const ColorOrder kOrders[] = {ColorOrder::Natural, ColorOrder::LargestFirst, ColorOrder::SmallestLast,
                              ColorOrder::IncidenceDegree, ColorOrder::Best};

SparsityPattern random_pattern(std::int32_t m, std::int32_t n, double density, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<std::int32_t> r, c;
  for (std::int32_t j = 0; j < n; ++j)
    for (std::int32_t i = 0; i < m; ++i)
      if (u(rng) < density) r.push_back(i), c.push_back(j);
  return pattern_from_coo(m, n, r, c);
}

SparsityPattern banded(std::int32_t n, std::int32_t half) {
  std::vector<std::int32_t> r, c;
  for (std::int32_t j = 0; j < n; ++j)
    for (std::int32_t i = std::max(0, j - half); i <= std::min(n - 1, j + half); ++i) r.push_back(i), c.push_back(j);
  return pattern_from_coo(n, n, r, c);
}

}  // namespace

TEST(ForwardColoring, KnownOptimalCounts) {
  // diagonal: 1 colour; tridiagonal: 3; band of half-width 2: 5; a dense row forces n.
  std::vector<std::int32_t> r, c;
  for (int i = 0; i < 50; ++i) r.push_back(i), c.push_back(i);
  const auto diag = pattern_from_coo(50, 50, r, c);
  for (auto o : kOrders) {
    auto col = color_columns(diag, o);
    EXPECT_EQ(col.num_colors, 1) << to_string(o);
    EXPECT_EQ(col.lower_bound, 1);
  }
  for (auto o : kOrders) {
    EXPECT_EQ(color_columns(banded(40, 1), o).num_colors, 3) << to_string(o);
    EXPECT_EQ(color_columns(banded(40, 2), o).lower_bound, 5) << to_string(o);
  }
  EXPECT_EQ(color_columns(banded(40, 1), ColorOrder::Natural).num_colors, 3);
  EXPECT_EQ(color_columns(banded(40, 2), ColorOrder::Natural).num_colors, 5);
  EXPECT_EQ(color_columns(banded(40, 2), ColorOrder::Best).num_colors, 5);
  // arrow: dense first row + diagonal
  r.clear();
  c.clear();
  for (int j = 0; j < 30; ++j) {
    r.push_back(0), c.push_back(j);
    r.push_back(j), c.push_back(j);
  }
  const auto arrow = pattern_from_coo(30, 30, r, c);
  for (auto o : kOrders) {
    auto col = color_columns(arrow, o);
    EXPECT_EQ(col.num_colors, 30) << to_string(o);
    EXPECT_EQ(col.lower_bound, 30);
    EXPECT_TRUE(is_valid_coloring(arrow, col));
  }
  // 5-point stencil (Bratu): lower bound 5, greedy natural needs 5 colours here too? at
  // least 5, and the best order reaches 5 on a grid (i + 2j mod 5 colouring exists).
  const auto grid = test_problems::bratu_pattern(20, 15);
  const auto best = color_columns(grid, ColorOrder::Best);
  EXPECT_EQ(best.lower_bound, 5);
  EXPECT_TRUE(is_valid_coloring(grid, best));
  EXPECT_GE(best.num_colors, 5);
  EXPECT_LE(best.num_colors, 7);
}

TEST(ForwardColoring, RandomPatternsValidAndAboveLowerBound) {
  for (unsigned seed = 1; seed <= 12; ++seed) {
    const std::int32_t m = 40 + 17 * seed, n = 30 + 11 * seed;
    const auto p = random_pattern(m, n, 0.02 + 0.01 * (seed % 5), seed);
    std::int32_t best_count = 1 << 30, min_other = 1 << 30;
    for (auto o : kOrders) {
      const auto c = color_columns(p, o);
      ASSERT_TRUE(is_valid_coloring(p, c)) << to_string(o) << " seed " << seed;
      EXPECT_GE(c.num_colors, c.lower_bound);
      EXPECT_LE(c.num_colors, n);
      if (o == ColorOrder::Best) best_count = c.num_colors;
      else min_other = std::min(min_other, c.num_colors);
      // deterministic
      EXPECT_EQ(color_columns(p, o).color, c.color);
    }
    EXPECT_EQ(best_count, min_other) << "best is the minimum over the orders";
  }
}

TEST(ForwardColoring, InvalidColoringDetected) {
  const auto p = banded(10, 1);
  auto c = color_columns(p, ColorOrder::Natural);
  ASSERT_TRUE(is_valid_coloring(p, c));
  c.color[1] = c.color[0];  // columns 0 and 1 share rows 0 and 1
  EXPECT_FALSE(is_valid_coloring(p, c));
  c = color_columns(p, ColorOrder::Natural);
  c.color[3] = c.num_colors;  // out of range
  EXPECT_FALSE(is_valid_coloring(p, c));
  c.color.pop_back();
  EXPECT_FALSE(is_valid_coloring(p, c));
}

TEST(ForwardColoring, SeedAndDecompressRecoverJacobian) {
  const auto p = random_pattern(70, 55, 0.06, 99);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> vals(p.nnz());
  for (auto& v : vals) v = u(rng);
  for (auto o : kOrders) {
    const auto c = color_columns(p, o);
    const auto S = seed_matrix(p, c);
    ASSERT_EQ(S.size(), std::size_t(p.n_cols) * c.num_colors);
    // B = J S computed column by column from the CSC values
    std::vector<double> B(std::size_t(p.n_rows) * c.num_colors, 0.0);
    for (std::int32_t j = 0; j < p.n_cols; ++j)
      for (std::int32_t k = 0; k < c.num_colors; ++k)
        if (S[j * c.num_colors + k] != 0)
          for (std::int32_t e = p.col_ptr[j]; e < p.col_ptr[j + 1]; ++e)
            B[p.row_idx[e] * c.num_colors + k] += vals[e] * S[j * c.num_colors + k];
    std::vector<double> back(p.nnz(), -7.0);
    decompress(p, c, B.data(), back.data());
    EXPECT_EQ(back, vals) << to_string(o);
  }
}

TEST(ForwardColoring, PatternFromCooSortsAndMerges) {
  const auto p = pattern_from_coo(3, 2, {2, 0, 2, 1, 0}, {0, 0, 0, 1, 1});
  EXPECT_EQ(p.col_ptr, (std::vector<std::int32_t>{0, 2, 4}));
  EXPECT_EQ(p.row_idx, (std::vector<std::int32_t>{0, 2, 0, 1}));
  EXPECT_NO_THROW(validate_pattern(p));
}

TEST(ForwardColoring, BadInputThrows) {
  EXPECT_THROW(pattern_from_coo(3, 3, {0, 3}, {0, 1}), Error);   // row out of range
  EXPECT_THROW(pattern_from_coo(3, 3, {0, 1}, {0, -1}), Error);  // column out of range
  EXPECT_THROW(pattern_from_coo(3, 3, {0, 1}, {0}), Error);      // size mismatch
  SparsityPattern p = banded(5, 1);
  auto bad = p;
  bad.row_idx[2] = 9;
  EXPECT_THROW(color_columns(bad), Error);
  bad = p;
  bad.col_ptr.pop_back();
  EXPECT_THROW(color_columns(bad), Error);
  bad = p;
  std::swap(bad.row_idx[0], bad.row_idx[1]);  // unsorted
  EXPECT_THROW(validate_pattern(bad), Error);
  bad = p;
  bad.row_idx[1] = bad.row_idx[0];  // duplicate
  EXPECT_THROW(validate_pattern(bad), Error);
  bad = p;
  bad.col_ptr[2] = 1;  // decreasing
  EXPECT_THROW(validate_pattern(bad), Error);
  try {
    bad = p;
    bad.row_idx[3] = -1;
    validate_pattern(bad, "my pattern");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("my pattern"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("row index -1"), std::string::npos);
  }
  EXPECT_THROW(color_order_from_string("random"), Error);
  EXPECT_EQ(color_order_from_string("sl"), ColorOrder::SmallestLast);
  EXPECT_EQ(color_order_from_string(to_string(ColorOrder::Best)), ColorOrder::Best);
  auto c = color_columns(p);
  c.color.pop_back();
  std::vector<double> B(100), v(p.nnz());
  EXPECT_THROW(decompress(p, c, B.data(), v.data()), Error);
  EXPECT_THROW(seed_matrix(p, c), Error);
}

TEST(ForwardColoring, CompressedPatternEqualsThePatternItCompresses) {
  // Rows: r0 = r1 = {c0, c3, c4}, r2 = {c1, c2}, r3 = {c0, c1, c2, c3}. Columns c0 and c3
  // have equal rows, as do c1 and c2: classes A = {0, 3}, B = {1, 2}, C = {4}.
  const SparsityPattern p = pattern_from_coo(4, 5, {0, 1, 3, 2, 3, 2, 3, 0, 1, 3, 0, 1}, {0, 0, 0, 1, 1, 2, 2, 3, 3, 3, 4, 4});
  CompressedPattern cp;
  cp.n_cols = 5;
  cp.class_ptr = {0, 2, 4, 5};        // A = {0, 3}, B = {1, 2}, C = {4}
  cp.class_cols = {0, 3, 1, 2, 4};
  cp.group_ptr = {0, 2, 3, 5};        // rows 0/1: {A, C}; row 2: {B}; row 3: {A, B}
  cp.group_classes = {0, 2, 1, 0, 1};
  for (ColorOrder o : kOrders) {
    const Coloring a = color_columns(p, o), b = color_compressed(cp, o);
    EXPECT_TRUE(is_valid_coloring(p, b)) << to_string(o);
    EXPECT_EQ(b.lower_bound, 4);
    EXPECT_EQ(a.lower_bound, 4);
    EXPECT_EQ(b.num_colors, 4) << to_string(o);  // row 3 has 4 columns: optimal
    EXPECT_EQ(a.num_colors, b.num_colors) << to_string(o);
  }
  // empty columns (no rows) are independent: one colour for all of them
  CompressedPattern empty;
  empty.n_cols = 3;
  empty.class_ptr = {0, 3};
  empty.class_cols = {0, 1, 2};
  empty.group_ptr = {0};
  const Coloring e = color_compressed(empty, ColorOrder::LargestFirst);
  EXPECT_EQ(e.num_colors, 1);
  EXPECT_EQ(e.color, (std::vector<std::int32_t>{0, 0, 0}));
  EXPECT_EQ(color_columns(pattern_from_coo(2, 3, {}, {}), ColorOrder::SmallestLast).num_colors, 1);
}

TEST(ForwardColoring, MalformedCompressedPatternThrows) {
  CompressedPattern ok;
  ok.n_cols = 3;
  ok.class_ptr = {0, 2, 3};
  ok.class_cols = {0, 2, 1};
  ok.group_ptr = {0, 2};
  ok.group_classes = {0, 1};
  EXPECT_NO_THROW(color_compressed(ok));
  auto bad = ok;
  bad.class_cols = {0, 0, 1};  // a column in two classes
  EXPECT_THROW(color_compressed(bad), Error);
  bad = ok;
  bad.class_cols = {2, 0, 1};  // not increasing within a class
  EXPECT_THROW(color_compressed(bad), Error);
  bad = ok;
  bad.class_ptr = {0, 2};  // column 2 in no class
  EXPECT_THROW(color_compressed(bad), Error);
  bad = ok;
  bad.group_classes = {0, 5};  // class out of range
  EXPECT_THROW(color_compressed(bad), Error);
  bad = ok;
  bad.group_classes = {1, 1};  // listed twice
  EXPECT_THROW(color_compressed(bad), Error);
  bad = ok;
  bad.group_ptr = {0, 3};  // does not match group_classes
  EXPECT_THROW(color_compressed(bad), Error);
  bad = ok;
  bad.class_ptr = {0, 0, 3};  // empty class
  EXPECT_THROW(color_compressed(bad), Error);
}
