// SPDX-License-Identifier: LGPL-2.1-or-later
// src/forward/jacobian_plan.cpp — the evaluation plans (Colored, RowLocal) of SparseJacobian
// (contract in include/stardiff/forward/sparse_jacobian.hpp).
//
// Rows are cut into contiguous blocks of about equal estimated cost (chunks touched ×
// (row non-zeros + 2)). For each block and chunk k (colours [k·W, (k+1)·W)) the plan lists
// the columns to seed, the runs of consecutive rows that have a non-zero of such a colour
// (rows without any non-zero are evaluated in chunk 0 for their value), and for those
// rows, in colour order, which partial goes to which output slot; output slots map to
// CSC positions for the final scatter.
#include <algorithm>
#include <cmath>
#include <string>

#include "stardiff/forward/sparse_jacobian.hpp"
#include "stardiff/runtime/error.hpp"

namespace stardiff::forward {

namespace {
// Contiguous row blocks of about equal cost: bounds[b] .. bounds[b + 1].
std::vector<std::int32_t> split_rows(const std::vector<double>& cost, std::int32_t nb) {
  const std::int32_t nrows = static_cast<std::int32_t>(cost.size());
  nb = std::max<std::int32_t>(1, std::min(nb, nrows));
  double total = 0;
  for (double x : cost) total += x;
  std::vector<std::int32_t> bounds{0};
  double acc = 0;
  std::int32_t next = 1;
  for (std::int32_t i = 0; i < nrows && next < nb; ++i) {
    acc += cost[i];
    // leave at least one row for each remaining block
    if (acc >= total * next / nb && i + 1 <= nrows - (nb - next)) {
      bounds.push_back(i + 1);
      ++next;
    }
  }
  while (static_cast<std::int32_t>(bounds.size()) < nb) bounds.push_back(bounds.back() + 1);
  bounds.push_back(nrows);
  return bounds;
}

std::int32_t auto_blocks(const SparsityPattern& p, int row_blocks) {
  return row_blocks > 0 ? row_blocks : std::clamp<std::int32_t>((p.nnz() + 16383) / 16384, 1, 16);
}

// Inverse of the blocks' csc_pos maps, cut into contiguous CSC ranges (gather tasks).
void build_gather(JacobianPlan& plan) {
  plan.src_block.assign(plan.nnz, -1);
  plan.src_index.assign(plan.nnz, -1);
  for (std::size_t b = 0; b < plan.blocks.size(); ++b) {
    const auto& B = plan.blocks[b];
    for (std::int32_t e = 0; e < B.out_size; ++e) {
      plan.src_block[B.csc_pos[e]] = static_cast<std::int32_t>(b);
      plan.src_index[B.csc_pos[e]] = e;
    }
  }
  for (std::int32_t e = 0; e < plan.nnz; ++e)
    if (plan.src_block[e] < 0) throw Error("jacobian plan: CSC entry " + std::to_string(e) + " has no source (internal)");
  const std::int32_t parts =
      std::clamp<std::int32_t>(plan.nnz / 32768, 1, std::max<std::int32_t>(1, static_cast<std::int32_t>(plan.blocks.size())));
  plan.gather_bounds.clear();
  for (std::int32_t g = 0; g <= parts; ++g)
    plan.gather_bounds.push_back(static_cast<std::int32_t>(static_cast<std::int64_t>(plan.nnz) * g / parts));
}
}  // namespace

JacobianPlan make_row_local_plan(const SparsityPattern& p, int width, int row_blocks) {
  validate_pattern(p, "make_row_local_plan pattern");
  if (!(width >= 1)) throw Error("make_row_local_plan: width " + std::to_string(width) + " < 1");
  if (!(row_blocks >= 0)) throw Error("make_row_local_plan: row_blocks " + std::to_string(row_blocks) + " < 0");
  JacobianPlan plan;
  plan.mode = JacobianMode::RowLocal;
  plan.n_rows = p.n_rows;
  plan.n_cols = p.n_cols;
  plan.nnz = p.nnz();
  plan.width = width;
  const std::int32_t nrows = p.n_rows;
  if (nrows == 0) return plan;
  std::vector<std::int32_t> rptr(nrows + 1, 0), col(p.nnz()), pos(p.nnz());
  for (std::int32_t e = 0; e < p.nnz(); ++e) ++rptr[p.row_idx[e] + 1];
  for (std::int32_t i = 0; i < nrows; ++i) rptr[i + 1] += rptr[i];
  {
    std::vector<std::int32_t> fill(rptr.begin(), rptr.end() - 1);
    for (std::int32_t j = 0; j < p.n_cols; ++j)
      for (std::int32_t e = p.col_ptr[j]; e < p.col_ptr[j + 1]; ++e) {
        const std::int32_t f = fill[p.row_idx[e]]++;
        col[f] = j;
        pos[f] = e;
      }
  }
  std::vector<double> cost(nrows);
  for (std::int32_t i = 0; i < nrows; ++i) {
    const std::int32_t nz = rptr[i + 1] - rptr[i], passes = std::max<std::int32_t>(1, (nz + width - 1) / width);
    cost[i] = double(passes) * double(nz + 2);
    plan.evaluated_rows += passes;
    plan.num_chunks = std::max(plan.num_chunks, passes);
  }
  const auto bounds = split_rows(cost, auto_blocks(p, row_blocks));
  const std::int32_t nb = static_cast<std::int32_t>(bounds.size()) - 1;
  plan.blocks.resize(nb);
  for (std::int32_t b = 0; b < nb; ++b) {
    auto& B = plan.blocks[b];
    B.row_begin = bounds[b];
    B.row_end = bounds[b + 1];
    const std::int32_t e0 = rptr[B.row_begin], e1 = rptr[B.row_end];
    B.row_ptr.resize(B.row_end - B.row_begin + 1);
    for (std::int32_t i = B.row_begin; i <= B.row_end; ++i) B.row_ptr[i - B.row_begin] = rptr[i] - e0;
    B.col.assign(col.begin() + e0, col.begin() + e1);
    B.csc_pos.assign(pos.begin() + e0, pos.begin() + e1);
    B.out_size = e1 - e0;
  }
  build_gather(plan);
  return plan;
}

JacobianPlan make_jacobian_plan(const SparsityPattern& p, const Coloring& c, int width, int row_blocks) {
  validate_pattern(p, "make_jacobian_plan pattern");
  if (!(width >= 1)) throw Error("make_jacobian_plan: width " + std::to_string(width) + " < 1");
  if (!(row_blocks >= 0)) throw Error("make_jacobian_plan: row_blocks " + std::to_string(row_blocks) + " < 0");
  if (!(c.color.size() == static_cast<std::size_t>(p.n_cols))) throw Error("make_jacobian_plan: colouring has " + std::to_string(c.color.size()) + " columns, the pattern " +
              std::to_string(p.n_cols));
  for (std::int32_t j = 0; j < p.n_cols; ++j)
    if (!(c.color[j] >= 0 && c.color[j] < c.num_colors)) throw Error("make_jacobian_plan: colour of column " + std::to_string(j) + " outside [0, num_colors)");

  JacobianPlan plan;
  plan.n_rows = p.n_rows;
  plan.n_cols = p.n_cols;
  plan.nnz = p.nnz();
  plan.num_colors = c.num_colors;
  plan.width = width;
  plan.num_chunks = std::max<std::int32_t>(1, (c.num_colors + width - 1) / width);
  const std::int32_t nrows = p.n_rows, nch = plan.num_chunks;
  if (nrows == 0) return plan;

  // Row-wise entries sorted by colour: column, colour, CSC position.
  std::vector<std::int32_t> rptr(nrows + 1, 0);
  for (std::int32_t e = 0; e < p.nnz(); ++e) ++rptr[p.row_idx[e] + 1];
  for (std::int32_t i = 0; i < nrows; ++i) rptr[i + 1] += rptr[i];
  struct Entry {
    std::int32_t color, col, pos;
  };
  std::vector<Entry> ent(p.nnz());
  {
    std::vector<std::int32_t> fill(rptr.begin(), rptr.end() - 1);
    for (std::int32_t j = 0; j < p.n_cols; ++j)
      for (std::int32_t e = p.col_ptr[j]; e < p.col_ptr[j + 1]; ++e)
        ent[fill[p.row_idx[e]]++] = Entry{c.color[j], j, e};
  }
  std::vector<double> cost(nrows);
  for (std::int32_t i = 0; i < nrows; ++i) {
    std::sort(ent.begin() + rptr[i], ent.begin() + rptr[i + 1],
              [](const Entry& a, const Entry& b) { return a.color < b.color; });
    std::int32_t touched = 0, last = -1;
    for (std::int32_t f = rptr[i]; f < rptr[i + 1]; ++f) {
      const std::int32_t k = ent[f].color / width;
      if (k != last) ++touched, last = k;
    }
    cost[i] = double(std::max<std::int32_t>(touched, 1)) * double(rptr[i + 1] - rptr[i] + 2);
  }

  const auto bounds = split_rows(cost, auto_blocks(p, row_blocks));
  const std::int32_t nb = static_cast<std::int32_t>(bounds.size()) - 1;

  std::vector<std::int32_t> seed_mark(p.n_cols, -1), cursor(nrows);
  std::int32_t stamp = 0;
  plan.blocks.resize(nb);
  for (std::int32_t b = 0; b < nb; ++b) {
    auto& B = plan.blocks[b];
    B.row_begin = bounds[b];
    B.row_end = bounds[b + 1];
    B.seed_ptr.assign(1, 0);
    B.run_ptr.assign(1, 0);
    B.ext_row_ptr.assign(1, 0);
    B.ext_ptr.assign(1, 0);
    for (std::int32_t i = B.row_begin; i < B.row_end; ++i) cursor[i] = rptr[i];
    for (std::int32_t k = 0; k < nch; ++k) {
      const std::int32_t hi = (k + 1) * width;  // colours < hi belong to chunks <= k
      ++stamp;
      std::int32_t run_begin = -1, run_end = -1;
      for (std::int32_t i = B.row_begin; i < B.row_end; ++i) {
        const std::int32_t f0 = cursor[i];
        std::int32_t f = f0;
        while (f < rptr[i + 1] && ent[f].color < hi) ++f;
        cursor[i] = f;
        const bool empty_row = rptr[i] == rptr[i + 1];
        if (f == f0 && !(k == 0 && empty_row)) continue;
        // evaluate row i in chunk k
        if (run_end == i) {
          ++run_end;
        } else {
          if (run_begin >= 0) B.runs.push_back(RowRange{run_begin, run_end});
          run_begin = i;
          run_end = i + 1;
        }
        ++plan.evaluated_rows;
        if (f == f0) continue;  // empty row: value only
        B.ext_row.push_back(i);
        for (std::int32_t g = f0; g < f; ++g) {
          const Entry& en = ent[g];
          B.ext_p.push_back(en.color - k * width);
          B.csc_pos.push_back(en.pos);
          if (seed_mark[en.col] != stamp) {
            seed_mark[en.col] = stamp;
            B.seed_col.push_back(en.col);
            B.seed_p.push_back(en.color - k * width);
          }
        }
        B.ext_ptr.push_back(static_cast<std::int32_t>(B.ext_p.size()));
      }
      if (run_begin >= 0) B.runs.push_back(RowRange{run_begin, run_end});
      B.seed_ptr.push_back(static_cast<std::int32_t>(B.seed_col.size()));
      B.run_ptr.push_back(static_cast<std::int32_t>(B.runs.size()));
      B.ext_row_ptr.push_back(static_cast<std::int32_t>(B.ext_row.size()));
    }
    B.out_size = static_cast<std::int32_t>(B.ext_p.size());
  }
  build_gather(plan);
  return plan;
}

}  // namespace stardiff::forward
