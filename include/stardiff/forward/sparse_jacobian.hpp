// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/forward/sparse_jacobian.hpp — coloured forward-mode sparse Jacobians of a
// residual written once as a template on the scalar type, evaluated as tasks.
//
// Contract:
//  * The residual F is a copyable functor
//      template <class S> void operator()(RowRange rows, const S* x, S* f) const;
//    that writes f[i] for i in [rows.begin, rows.end) (global row numbers) and may read
//    any x[j] (row-range.hpp). F(x) must depend on x[j] in row i only where the sparsity
//    pattern has (i, j). A dependency outside it is not detected by jacobian(): Colored
//    mode adds it to row i's entry in the column of the same colour (a wrong value, no
//    error), or drops it when row i has no such entry; RowLocal mode drops it.
//  * verify_pattern(exec, x) finds such dependencies at x: it seeds every column in turn
//    (ceil(n_cols / W) evaluations of F on all rows, a dense sweep: for tests and
//    debugging) and returns a PatternCheck naming the first off-pattern (row, column),
//    row-major, whose partial is non-zero or NaN; a partial that vanishes at x is missed.
//  * SparseJacobian<F, W> colours the pattern's columns (distance-2, coloring.hpp) and
//    evaluates the compressed Jacobian in chunks of W colours: pass k seeds x[j] with
//    partial color[j] - k·W on Dual<W> for the colours [k·W, (k+1)·W) and evaluates only
//    the rows that have a non-zero of such a colour (structurally zero partials skipped).
//    W = 8 is the default; W >= num_colors gives the classical one-pass Dual<W> sweep.
//  * Work is split into row blocks (contiguous rows, balanced by estimated cost), one task
//    per block: x is one read-only handle, each block writes its own output handles;
//    gather tasks (one per contiguous range of CSC values, about 32k values each) then
//    read every block output and fill their range of the CSC values (pattern layout).
//  * residual() evaluates F on double; jacobian() gives the CSC values and optionally F
//    (the value parts of the dual sweep, bitwise equal to residual()). Both wait for
//    their tasks (exec.wait_all()) and are deterministic: any executor, scheduler and
//    worker count gives bitwise identical results.
//  * GPUs: in a translation unit compiled by nvcc, a residual type declaring
//    `static constexpr bool cuda = true` (operator() STARDIFF_HD) gives the residual, the
//    Colored-mode jacobian and the decompression codelets CUDA implementations as well
//    (sparse_jacobian_cuda.hpp); StarPU picks per task. RowLocal mode stays on CPUs.
//  * Sizes are checked (stardiff::Error naming the argument); a malformed pattern or
//    colouring throws at construction. One object must not run two calls concurrently;
//    it is movable between calls.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <typeinfo>
#include <vector>

#include "stardiff/forward/coloring.hpp"
#include "stardiff/forward/dual.hpp"
#include "stardiff/forward/row_range.hpp"
#include "stardiff/runtime/executor.hpp"
#if defined(__CUDACC__)
#include "stardiff/forward/sparse_jacobian_cuda.hpp"
#endif

namespace stardiff::forward {

// Colored: chunks of W colours over the whole system (ExaPF's scheme, structurally zero
//   chunks of a row skipped). RowLocal: each row alone, its own non-zeros seeded as
//   partials 0.. (ceil(nnz(row)/W) passes per row): no colouring needed, fewest dual
//   evaluations; valid under the same contract (row i reads x only on its pattern).
enum class JacobianMode { Colored, RowLocal };

struct JacobianOptions {
  ColorOrder order = ColorOrder::Best;  // used when no colouring is given
  std::int32_t row_blocks = 0;          // tasks per evaluation; 0: automatic
  JacobianMode mode = JacobianMode::Colored;
};

// The evaluation plan of a pattern, a colouring and a chunk width (non-template part).
struct JacobianPlan {
  std::int32_t n_rows = 0, n_cols = 0, nnz = 0, num_colors = 0, width = 0, num_chunks = 0;
  JacobianMode mode = JacobianMode::Colored;
  struct Block {
    std::int32_t row_begin = 0, row_end = 0;
    std::int32_t out_size = 0;  // entries this block extracts (its non-zeros)
    // RowLocal: row i's entries e in [row_ptr[i - row_begin], row_ptr[i - row_begin + 1])
    // (CSR order): column col[e], out[e] is CSC value csc_pos[e].
    std::vector<std::int32_t> row_ptr, col;
    // Chunk k: seed x[seed_col[s]] partial seed_p[s] for s in [seed_ptr[k], seed_ptr[k+1]),
    // evaluate the row runs runs[run_ptr[k] .. run_ptr[k+1]), then for each r in
    // [ext_row_ptr[k], ext_row_ptr[k+1]) copy partial ext_p[e] of f[ext_row[r]] into
    // out[e] for e in [ext_ptr[r], ext_ptr[r+1]).
    std::vector<std::int32_t> seed_ptr, seed_col, seed_p;
    std::vector<std::int32_t> run_ptr;
    std::vector<RowRange> runs;
    std::vector<std::int32_t> ext_row_ptr, ext_row, ext_ptr, ext_p;
    std::vector<std::int32_t> csc_pos;  // out[e] is CSC value csc_pos[e]
  };
  std::vector<Block> blocks;
  // CSC value e comes from out[src_index[e]] of block src_block[e]; gather task g fills
  // CSC values [gather_bounds[g], gather_bounds[g + 1]).
  std::vector<std::int32_t> src_block, src_index, gather_bounds;
  std::int64_t evaluated_rows = 0;  // rows evaluated summed over chunks (work measure)
};

// What verify_pattern found: off-pattern partials that are non-zero (or NaN) at x.
struct PatternCheck {
  std::int64_t violations = 0;      // such (row, column) entries
  std::int32_t row = -1, col = -1;  // the first, row-major (-1 when none)
  double partial = 0.0;             // dF_row / dx_col at x
  bool ok() const { return violations == 0; }
  std::string message() const {
    if (ok()) return "the residual reads x only on the pattern";
    char b[64];
    std::snprintf(b, sizeof b, "%.17g", partial);
    return "row " + std::to_string(row) + " depends on x[" + std::to_string(col) +
           "] outside the pattern (partial " + b + "); " + std::to_string(violations) +
           " off-pattern entr" + (violations == 1 ? "y" : "ies") + " in all";
  }
};

// Builds the plan. width >= 1; row_blocks 0 picks about one block per 16k non-zeros (max 16).
JacobianPlan make_jacobian_plan(const SparsityPattern& p, const Coloring& c, int width,
                                int row_blocks);
// The RowLocal plan (no colouring).
JacobianPlan make_row_local_plan(const SparsityPattern& p, int width, int row_blocks);

template <class F, int W = 8>
class SparseJacobian {
 public:
  using Scalar = Dual<W, double>;

  // Colored mode colours the pattern with opts.order here; RowLocal mode colours only
  // when coloring() or compressed() is first called.
  SparseJacobian(SparsityPattern pattern, F residual, JacobianOptions opts = {})
      : pattern_(std::move(pattern)), f_(std::move(residual)), order_(opts.order) {
    validate_pattern(pattern_, "SparseJacobian pattern");
    if (opts.mode == JacobianMode::RowLocal) {
      plan_ = make_row_local_plan(pattern_, W, opts.row_blocks);
    } else {
      coloring_ = color_columns(pattern_, opts.order);
      has_coloring_ = true;
      plan_ = make_jacobian_plan(pattern_, coloring_, W, opts.row_blocks);
    }
  }
  SparseJacobian(SparsityPattern pattern, Coloring coloring, F residual, JacobianOptions opts = {})
      : pattern_(std::move(pattern)), coloring_(std::move(coloring)), f_(std::move(residual)), has_coloring_(true) {
    validate_pattern(pattern_, "SparseJacobian pattern");
    require(is_valid_coloring(pattern_, coloring_),
            "SparseJacobian: the given colouring is not a valid distance-2 colouring of the pattern");
    plan_ = opts.mode == JacobianMode::RowLocal ? make_row_local_plan(pattern_, W, opts.row_blocks)
                                                : make_jacobian_plan(pattern_, coloring_, W, opts.row_blocks);
  }

  const SparsityPattern& pattern() const { return pattern_; }
  const Coloring& coloring() const {
    if (!has_coloring_) {
      coloring_ = color_columns(pattern_, order_);
      has_coloring_ = true;
    }
    return coloring_;
  }
  JacobianMode mode() const { return plan_.mode; }
  const JacobianPlan& plan() const { return plan_; }
  F& function() { return f_; }
  const F& function() const { return f_; }
  std::int32_t n_rows() const { return pattern_.n_rows; }
  std::int32_t n_cols() const { return pattern_.n_cols; }
  std::int32_t nnz() const { return pattern_.nnz(); }
  std::int32_t num_colors() const { return coloring().num_colors; }
  // Colored: chunks of W colours; RowLocal: the most passes any row needs.
  std::int32_t num_chunks() const { return plan_.num_chunks; }
  std::size_t num_blocks() const { return plan_.blocks.size(); }

  // f = F(x) on double, one task per row block.
  void residual(Executor& exec, std::span<const double> x, std::span<double> f) {
    check_sizes(x, f, "residual");
    if (n_rows() == 0) return;
    ++generation_;
    Handle hx = x_handle(x);
    std::vector<Handle> hf;
    hf.reserve(plan_.blocks.size());
    for (std::size_t b = 0; b < plan_.blocks.size(); ++b) {
      const auto& B = plan_.blocks[b];
      hf.push_back(Handle::vector(f.data() + B.row_begin, B.row_end - B.row_begin, sizeof(double), "f"));
      exec.submit(residual_codelet(), TaskArgs{this, static_cast<std::int32_t>(b)}, {in(hx), out(hf[b])},
                  {.name = "forward_residual"});
    }
    exec.wait_all();
  }

  // CSC values of J(x) (pattern layout) and, when f is non-empty, f = F(x).
  void jacobian(Executor& exec, std::span<const double> x, std::span<double> csc_values,
                std::span<double> f = {}) {
    require(csc_values.size() == static_cast<std::size_t>(nnz()),
            "SparseJacobian::jacobian: csc_values has " + std::to_string(csc_values.size()) +
                " entries, the pattern " + std::to_string(nnz()));
    if (f.empty()) {
      fbuf_.resize(n_rows());
      f = fbuf_;
    }
    check_sizes(x, f, "jacobian");
    if (n_rows() == 0) return;
    ++generation_;
    const std::size_t nb = plan_.blocks.size();
    if (out_.size() != nb) {
      out_.resize(nb);
      for (std::size_t b = 0; b < nb; ++b) out_[b].resize(std::max<std::int32_t>(1, plan_.blocks[b].out_size));
    }
    Handle hx = x_handle(x);
    std::vector<Handle> hf, ho, hv;
    hf.reserve(nb);
    ho.reserve(nb);
    std::vector<DataAccess> gather;
    gather.reserve(nb + 1);
    for (std::size_t b = 0; b < nb; ++b) {
      const auto& B = plan_.blocks[b];
      hf.push_back(Handle::vector(f.data() + B.row_begin, B.row_end - B.row_begin, sizeof(double), "f"));
      ho.push_back(Handle::vector(out_[b].data(), out_[b].size(), sizeof(double), "jacobian_block"));
      exec.submit(plan_.mode == JacobianMode::Colored ? colored_codelet() : jacobian_codelet(),
                  TaskArgs{this, static_cast<std::int32_t>(b)},
                  {in(hx), out(ho[b]), out(hf[b])}, {.name = "forward_jacobian"});
      gather.push_back(in(ho[b]));
    }
    const std::size_t ng = plan_.gather_bounds.size() - 1;
    hv.reserve(ng);
    gather.push_back(DataAccess{});
    for (std::size_t g = 0; g < ng && nnz() > 0; ++g) {
      const std::int32_t e0 = plan_.gather_bounds[g], e1 = plan_.gather_bounds[g + 1];
      if (e1 == e0) continue;
      hv.push_back(Handle::vector(csc_values.data() + e0, e1 - e0, sizeof(double), "jacobian_values"));
      gather.back() = out(hv.back());
      const TaskArgs a{this, static_cast<std::int32_t>(g)};
      exec.submit(scatter_codelet(), gather, &a, sizeof a, {.name = "forward_jacobian_scatter"});
    }
    exec.wait_all();
  }

  // The compressed Jacobian B = J·S (n_rows x num_colors, row-major), from jacobian().
  void compressed(Executor& exec, std::span<const double> x, std::span<double> B) {
    coloring();
    require(B.size() == static_cast<std::size_t>(n_rows()) * static_cast<std::size_t>(num_colors()),
            "SparseJacobian::compressed: B has " + std::to_string(B.size()) + " entries, expected n_rows*num_colors = " +
                std::to_string(static_cast<std::size_t>(n_rows()) * num_colors()));
    std::vector<double> vals(nnz());
    jacobian(exec, x, vals);
    std::fill(B.begin(), B.end(), 0.0);
    const std::size_t nc = num_colors();
    for (std::int32_t j = 0; j < n_cols(); ++j)
      for (std::int32_t e = pattern_.col_ptr[j]; e < pattern_.col_ptr[j + 1]; ++e)
        B[pattern_.row_idx[e] * nc + coloring_.color[j]] = vals[e];
  }

  // Off-pattern dependencies of F at x (see the contract); throws Error only for a wrong x size.
  PatternCheck verify_pattern(Executor& exec, std::span<const double> x) {
    require(x.size() == static_cast<std::size_t>(n_cols()),
            "SparseJacobian::verify_pattern: x has " + std::to_string(x.size()) + " entries, the pattern " +
                std::to_string(n_cols()) + " columns");
    PatternCheck rep;
    const std::int32_t probes = (n_cols() + W - 1) / W;
    if (n_rows() == 0 || probes == 0) return rep;
    VerifyContext ctx;
    ctx.row_ptr.assign(static_cast<std::size_t>(n_rows()) + 1, 0);
    for (std::int32_t e = 0; e < nnz(); ++e) ++ctx.row_ptr[pattern_.row_idx[e] + 1];
    for (std::int32_t i = 0; i < n_rows(); ++i) ctx.row_ptr[i + 1] += ctx.row_ptr[i];
    ctx.col.resize(nnz());
    std::vector<std::int32_t> fill(ctx.row_ptr.begin(), ctx.row_ptr.end() - 1);
    for (std::int32_t j = 0; j < n_cols(); ++j)
      for (std::int32_t e = pattern_.col_ptr[j]; e < pattern_.col_ptr[j + 1]; ++e) ctx.col[fill[pattern_.row_idx[e]]++] = j;
    const std::int32_t tasks = std::min<std::int32_t>(probes, std::max(1, 4 * exec.concurrency()));
    std::vector<double> results(static_cast<std::size_t>(tasks) * 4);
    Handle hx = x_handle(x);
    std::vector<Handle> hr;
    hr.reserve(tasks);
    for (std::int32_t t = 0; t < tasks; ++t) {
      hr.push_back(Handle::vector(results.data() + 4 * t, 4, sizeof(double), "pattern_check"));
      const VerifyArgs a{this, &ctx, std::int32_t(std::int64_t(probes) * t / tasks),
                         std::int32_t(std::int64_t(probes) * (t + 1) / tasks)};
      exec.submit(verify_codelet(), a, {in(hx), out(hr[t])}, {.name = "forward_verify_pattern"});
    }
    exec.wait_all();
    for (std::int32_t t = 0; t < tasks; ++t) {
      const double* r = results.data() + 4 * t;
      if (r[0] == 0) continue;
      rep.violations += static_cast<std::int64_t>(r[0]);
      const auto i = static_cast<std::int32_t>(r[1]), j = static_cast<std::int32_t>(r[2]);
      if (rep.row < 0 || i < rep.row || (i == rep.row && j < rep.col)) {
        rep.row = i;
        rep.col = j;
        rep.partial = r[3];
      }
    }
    return rep;
  }

  // Sequential conveniences (SequentialExecutor).
  PatternCheck verify_pattern(std::span<const double> x) {
    SequentialExecutor s;
    return verify_pattern(s, x);
  }
  void residual(std::span<const double> x, std::span<double> f) {
    SequentialExecutor s;
    residual(s, x, f);
  }
  void jacobian(std::span<const double> x, std::span<double> csc_values, std::span<double> f = {}) {
    SequentialExecutor s;
    jacobian(s, x, csc_values, f);
  }

 private:
  struct TaskArgs {
    SparseJacobian* self;
    std::int32_t block;
  };
  struct VerifyContext {
    std::vector<std::int32_t> row_ptr, col;  // the pattern in CSR, columns increasing
  };
  struct VerifyArgs {
    SparseJacobian* self;
    const VerifyContext* ctx;
    std::int32_t probe_begin, probe_end;
  };
  struct Scratch {
    std::vector<Scalar> xd, fd;
    std::vector<double> fv;
    std::uint64_t generation = 0;
    bool valid = false;  // xd holds x values of `generation` and all partials zero
  };

  void check_sizes(std::span<const double> x, std::span<double> f, const char* fn) const {
    require(x.size() == static_cast<std::size_t>(n_cols()),
            std::string("SparseJacobian::") + fn + ": x has " + std::to_string(x.size()) +
                " entries, the pattern " + std::to_string(n_cols()) + " columns");
    require(f.size() == static_cast<std::size_t>(n_rows()),
            std::string("SparseJacobian::") + fn + ": f has " + std::to_string(f.size()) +
                " entries, the pattern " + std::to_string(n_rows()) + " rows");
  }

  // x as a read-only handle (a one-element placeholder when there is no unknown).
  Handle x_handle(std::span<const double> x) {
    if (x.empty()) return Handle::vector(&x_placeholder_, 1, sizeof(double), "x");
    return Handle::vector(const_cast<double*>(x.data()), x.size(), sizeof(double), "x");
  }

  Scratch& scratch(int worker) {
    std::lock_guard<std::mutex> lock(*scratch_mutex_);
    auto& s = scratch_[worker];
    if (!s) s = std::make_unique<Scratch>();
    return *s;
  }

  void run_residual_block(int worker, std::int32_t b, const double* x, double* fblock) {
    const auto& B = plan_.blocks[b];
    Scratch& s = scratch(worker);
    s.fv.resize(n_rows());
    f_(RowRange{B.row_begin, B.row_end}, x, s.fv.data());
    for (std::int32_t i = B.row_begin; i < B.row_end; ++i) fblock[i - B.row_begin] = s.fv[i];
  }

  void run_jacobian_block(int worker, std::int32_t b, const double* x, double* out, double* fblock) {
    const auto& B = plan_.blocks[b];
    Scratch& s = scratch(worker);
    prepare(s, x);
    if (plan_.mode == JacobianMode::RowLocal) run_row_local(s, B, out, fblock);
    else run_colored(s, B, out, fblock);
    s.valid = true;
  }

  // Scratch x holds the current x values with all partials zero (invalid while seeded).
  void prepare(Scratch& s, const double* x) {
    const std::int32_t n = n_cols();
    if (!s.valid) {
      s.xd.assign(n, Scalar(0.0));
      s.fd.resize(n_rows());
      for (std::int32_t j = 0; j < n; ++j) s.xd[j].v = x[j];
    } else if (s.generation != generation_) {
      for (std::int32_t j = 0; j < n; ++j) s.xd[j].v = x[j];
    }
    s.valid = false;  // until the seeds are cleared again
    s.generation = generation_;
  }

  void run_row_local(Scratch& s, const JacobianPlan::Block& B, double* out, double* fblock) {
    Scalar* xd = s.xd.data();
    Scalar* fd = s.fd.data();
    const std::int32_t* rp = B.row_ptr.data();
    const std::int32_t* col = B.col.data();
    for (std::int32_t i = B.row_begin; i < B.row_end; ++i) {
      const std::int32_t e0 = rp[i - B.row_begin], e1 = rp[i - B.row_begin + 1];
      std::int32_t e = e0;
      do {
        const std::int32_t en = std::min(e + W, e1);
        for (std::int32_t q = e; q < en; ++q) xd[col[q]].d[q - e] = 1.0;
        f_(RowRange{i, i + 1}, static_cast<const Scalar*>(xd), fd);
        for (std::int32_t q = e; q < en; ++q) {
          out[q] = fd[i].d[q - e];
          xd[col[q]].d[q - e] = 0.0;
        }
        e = en;
      } while (e < e1);
      fblock[i - B.row_begin] = fd[i].v;
    }
  }

  void run_colored(Scratch& s, const JacobianPlan::Block& B, double* out, double* fblock) {
    Scalar* xd = s.xd.data();
    Scalar* fd = s.fd.data();
    for (std::int32_t k = 0; k < plan_.num_chunks; ++k) {
      for (std::int32_t q = B.seed_ptr[k]; q < B.seed_ptr[k + 1]; ++q) xd[B.seed_col[q]].d[B.seed_p[q]] = 1.0;
      for (std::int32_t r = B.run_ptr[k]; r < B.run_ptr[k + 1]; ++r) f_(B.runs[r], static_cast<const Scalar*>(xd), fd);
      for (std::int32_t r = B.ext_row_ptr[k]; r < B.ext_row_ptr[k + 1]; ++r) {
        const Scalar& fi = fd[B.ext_row[r]];
        for (std::int32_t e = B.ext_ptr[r]; e < B.ext_ptr[r + 1]; ++e) out[e] = fi.d[B.ext_p[e]];
      }
      for (std::int32_t q = B.seed_ptr[k]; q < B.seed_ptr[k + 1]; ++q) xd[B.seed_col[q]].d[B.seed_p[q]] = 0.0;
    }
    for (std::int32_t i = B.row_begin; i < B.row_end; ++i) fblock[i - B.row_begin] = fd[i].v;
  }

  // Probes [k0, k1): probe k seeds x[k·W + p] with partial p; res = {count, row, col, partial}.
  void run_verify(const VerifyContext& c, std::int32_t k0, std::int32_t k1, const double* x, double* res) {
    const std::int32_t n = n_cols(), m = n_rows();
    std::vector<Scalar> xd(n), fd(m);
    for (std::int32_t j = 0; j < n; ++j) xd[j].v = x[j];
    std::vector<std::int32_t> cur(c.row_ptr.begin(), c.row_ptr.end() - 1);
    std::int64_t count = 0;
    std::int32_t br = -1, bc = -1;
    double bp = 0.0;
    bool in_pattern[W];
    for (std::int32_t k = k0; k < k1; ++k) {
      const std::int32_t j0 = k * W, j1 = std::min(j0 + W, n);
      for (std::int32_t j = j0; j < j1; ++j) xd[j].d[j - j0] = 1.0;
      f_(RowRange{0, m}, static_cast<const Scalar*>(xd.data()), fd.data());
      for (std::int32_t i = 0; i < m; ++i) {
        std::fill(in_pattern, in_pattern + W, false);
        std::int32_t& q = cur[i];
        const std::int32_t e1 = c.row_ptr[i + 1];
        while (q < e1 && c.col[q] < j0) ++q;
        for (std::int32_t e = q; e < e1 && c.col[e] < j1; ++e) in_pattern[c.col[e] - j0] = true;
        for (std::int32_t p = 0; p < j1 - j0; ++p) {
          const double d = fd[i].d[p];
          if (in_pattern[p] || d == 0.0) continue;
          ++count;
          if (br < 0 || i < br || (i == br && j0 + p < bc)) {
            br = i;
            bc = j0 + p;
            bp = d;
          }
        }
      }
      for (std::int32_t j = j0; j < j1; ++j) xd[j].d[j - j0] = 0.0;
    }
    res[0] = static_cast<double>(count);
    res[1] = br;
    res[2] = bc;
    res[3] = bp;
  }

  // Gather part g: CSC values [gather_bounds[g], gather_bounds[g + 1]) from the block outputs.
  void run_scatter(const BufferView* bufs, std::int32_t g) {
    const std::size_t nb = plan_.blocks.size();
    const double* outs[64];
    std::vector<const double*> many;
    const double** o = outs;
    if (nb > 64) {
      many.resize(nb);
      o = many.data();
    }
    for (std::size_t b = 0; b < nb; ++b) o[b] = bufs[b].data<const double>();
    const std::int32_t e0 = plan_.gather_bounds[g], e1 = plan_.gather_bounds[g + 1];
    double* vals = bufs[nb].data<double>();
    const std::int32_t* sb = plan_.src_block.data() + e0;
    const std::int32_t* si = plan_.src_index.data() + e0;
    for (std::int32_t e = 0; e < e1 - e0; ++e) vals[e] = o[sb[e]][si[e]];
  }

  static std::string codelet_name(const char* base) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "_w%d_%08zx", W, std::hash<std::string>{}(typeid(F).name()) & 0xffffffffu);
    return std::string(base) + buf;
  }
  static void residual_task(const TaskContext& t) {
    const auto& a = t.arg<TaskArgs>();
    a.self->run_residual_block(t.worker, a.block, t.buffers[0].data<const double>(), t.buffers[1].data<double>());
  }
  static void jacobian_task(const TaskContext& t) {
    const auto& a = t.arg<TaskArgs>();
    a.self->run_jacobian_block(t.worker, a.block, t.buffers[0].data<const double>(), t.buffers[1].data<double>(),
                               t.buffers[2].data<double>());
  }
  static void scatter_task(const TaskContext& t) {
    const auto& a = t.arg<TaskArgs>();
    a.self->run_scatter(t.buffers.data(), a.block);
  }
  static void verify_task(const TaskContext& t) {
    const auto& a = t.arg<VerifyArgs>();
    a.self->run_verify(*a.ctx, a.probe_begin, a.probe_end, t.buffers[0].data<const double>(), t.buffers[1].data<double>());
  }
  // CUDA implementations (see the contract): only where F opts in and nvcc compiles this.
  static constexpr bool device_capable() {
#if defined(__CUDACC__)
    if constexpr (requires { F::cuda; }) return static_cast<bool>(F::cuda);
#endif
    return false;
  }
#if defined(__CUDACC__)
  static void device_result(const TaskContext& t, cudaError_t e, const char* what) {
    if (e != cudaSuccess) t.fail(std::string(what) + ": " + cudaGetErrorString(e));
  }
  static void residual_task_cuda(const TaskContext& t) {
    if constexpr (device_capable()) {
      const auto& a = t.arg<TaskArgs>();
      const auto& B = a.self->plan_.blocks[a.block];
      device_result(t, cuda_detail::residual_block(a.self->f_, B.row_begin, B.row_end, t.buffers[0].data<const double>(),
                                                   t.buffers[1].data<double>(), static_cast<cudaStream_t>(t.cuda_stream)),
                    "SparseJacobian residual (CUDA)");
    }
  }
  static void colored_task_cuda(const TaskContext& t) {
    if constexpr (device_capable()) {
      const auto& a = t.arg<TaskArgs>();
      const SparseJacobian& J = *a.self;
      device_result(t, cuda_detail::jacobian_block<F, W>(J.f_, J.plan_.blocks[a.block], J.plan_.num_chunks, J.n_rows(),
                                                         J.n_cols(), t.buffers[0].data<const double>(),
                                                         t.buffers[1].data<double>(), t.buffers[2].data<double>(),
                                                         static_cast<cudaStream_t>(t.cuda_stream)),
                    "SparseJacobian jacobian (CUDA)");
    }
  }
  static void scatter_task_cuda(const TaskContext& t) {
    if constexpr (device_capable()) {
      const auto& a = t.arg<TaskArgs>();
      const JacobianPlan& P = a.self->plan_;
      const std::size_t nb = P.blocks.size();
      std::vector<const double*> outs(nb);
      for (std::size_t b = 0; b < nb; ++b) outs[b] = t.buffers[b].data<const double>();
      device_result(t, cuda_detail::scatter_values(outs, P.src_block.data(), P.src_index.data(), P.gather_bounds[a.block],
                                                   P.gather_bounds[a.block + 1], t.buffers[nb].data<double>(),
                                                   static_cast<cudaStream_t>(t.cuda_stream)),
                    "SparseJacobian decompression (CUDA)");
    }
  }
  static constexpr KernelFn cuda_fn(KernelFn f) { return device_capable() ? f : nullptr; }
#else
  static constexpr KernelFn cuda_fn(KernelFn) { return nullptr; }
  static constexpr KernelFn residual_task_cuda = nullptr, colored_task_cuda = nullptr, scatter_task_cuda = nullptr;
#endif
  static const Codelet& colored_codelet() {  // Colored mode: CPU, and CUDA where available
    static const Codelet cl(codelet_name("forward_jacobian_colored"), &jacobian_task, cuda_fn(colored_task_cuda));
    return cl;
  }
  static const Codelet& verify_codelet() {
    static const Codelet cl(codelet_name("forward_verify_pattern"), &verify_task);
    return cl;
  }
  static const Codelet& residual_codelet() {
    static const Codelet cl(codelet_name("forward_residual"), &residual_task, cuda_fn(residual_task_cuda));
    return cl;
  }
  static const Codelet& jacobian_codelet() {
    static const Codelet cl(codelet_name("forward_jacobian"), &jacobian_task);
    return cl;
  }
  static const Codelet& scatter_codelet() {
    static const Codelet cl(codelet_name("forward_jacobian_scatter"), &scatter_task, cuda_fn(scatter_task_cuda));
    return cl;
  }

  SparsityPattern pattern_;
  mutable Coloring coloring_;  // computed lazily in RowLocal mode
  F f_;
  ColorOrder order_ = ColorOrder::Best;
  mutable bool has_coloring_ = false;
  JacobianPlan plan_;
  std::vector<std::vector<double>> out_;
  std::vector<double> fbuf_;
  std::uint64_t generation_ = 0;
  double x_placeholder_ = 0.0;
  std::unique_ptr<std::mutex> scratch_mutex_ = std::make_unique<std::mutex>();
  std::map<int, std::unique_ptr<Scratch>> scratch_;
};

}  // namespace stardiff::forward
