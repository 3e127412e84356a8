// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/forward/coloring.hpp — Jacobian sparsity, column colouring, decompression.
//
// Contract:
//  * SparsityPattern is a CSC pattern (rows strictly increasing within each column);
//    validate_pattern throws stardiff::Error naming `what` and the first defect (sizes,
//    col_ptr not monotone, row index out of range, unsorted or duplicate rows).
//    pattern_from_coo builds one from (row, col) pairs (any order, duplicates merged;
//    out-of-range indices throw).
//  * color_columns returns a distance-2 colouring of the column intersection graph
//    (partial colouring of the bipartite graph): two columns sharing a row never share
//    a colour, so J * seed (seed(j, color[j]) = 1) determines every nonzero of J.
//    lower_bound = max nonzeros in a row. The graph is kept per class of columns with
//    equal row sets (members of a class are mutually adjacent and coloured together).
//    Orders: natural visits single columns by index; largest-first, smallest-last and
//    incidence-degree order the classes (ties by first column). Order::Best tries
//    largest-first, smallest-last, incidence-degree, natural and keeps the fewest colours
//    (ties: the first tried); it stops at the first colouring that reaches lower_bound.
//    Deterministic: the same pattern always gives the same colouring.
//  * color_compressed is the same colouring from a pattern already given in compressed
//    form (a caller who knows its structure, e.g. the power-flow Jacobian, skips the class
//    detection): column classes (each column in exactly one, increasing within it) and row
//    groups (one per distinct row, listing the column classes it touches; a pattern's rows
//    with equal column sets may share a group). lower_bound = max columns in a group.
//    Malformed input throws Error.
//  * seed_matrix is the n_cols x num_colors 0/1 matrix S (row-major: S[j * num_colors + c]).
//  * decompress reads the compressed Jacobian B (n_rows x num_colors, row-major:
//    B[i * num_colors + c]) into CSC values laid out exactly as the pattern.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace stardiff::forward {

struct SparsityPattern {
  std::int32_t n_rows = 0, n_cols = 0;
  std::vector<std::int32_t> col_ptr;  // n_cols + 1
  std::vector<std::int32_t> row_idx;  // nnz
  std::int32_t nnz() const { return col_ptr.empty() ? 0 : col_ptr.back(); }
};

void validate_pattern(const SparsityPattern& p, const std::string& what = "pattern");
SparsityPattern pattern_from_coo(std::int32_t n_rows, std::int32_t n_cols,
                                 const std::vector<std::int32_t>& rows,
                                 const std::vector<std::int32_t>& cols);

enum class ColorOrder { Natural, LargestFirst, SmallestLast, IncidenceDegree, Best };
const char* to_string(ColorOrder o);  // natural|lf|sl|id|best
ColorOrder color_order_from_string(const std::string& s);  // natural|lf|sl|id|best; Error otherwise

struct Coloring {
  std::vector<std::int32_t> color;  // per column, 0-based
  std::int32_t num_colors = 0;
  std::int32_t lower_bound = 0;
  ColorOrder order = ColorOrder::Natural;  // the order that produced it
};

Coloring color_columns(const SparsityPattern& p, ColorOrder order = ColorOrder::Best);

struct CompressedPattern {
  std::int32_t n_cols = 0;
  std::vector<std::int32_t> class_ptr, class_cols;     // class c: columns class_cols[class_ptr[c] ..)
  std::vector<std::int32_t> group_ptr, group_classes;  // row group g: classes group_classes[group_ptr[g] ..)
};
Coloring color_compressed(const CompressedPattern& p, ColorOrder order = ColorOrder::Best);
// True when no two columns of one colour share a row (structurally orthogonal) and the
// colouring has the pattern's size with colours in [0, num_colors).
bool is_valid_coloring(const SparsityPattern& p, const Coloring& c);
std::vector<double> seed_matrix(const SparsityPattern& p, const Coloring& c);
void decompress(const SparsityPattern& p, const Coloring& c, const double* compressed, double* csc_values);

}  // namespace stardiff::forward
