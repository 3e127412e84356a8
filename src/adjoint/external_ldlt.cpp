// SPDX-License-Identifier: LGPL-2.1-or-later
// src/adjoint/external_ldlt.cpp — SparseSolve (see sparse_solve.hpp): sparse::Ldlt inside one
// external-function task (sequential inside it), factors kept between calls and the adjoint.
#include <cmath>
#include <cstring>

#include "stardiff/adjoint/external.hpp"
#include "stardiff/adjoint/sparse_solve.hpp"

namespace stardiff {

struct SparseSolve::State {
  std::string name;
  sparse::CscMatrix32 A;
  std::vector<Entry> where;
  std::vector<std::int32_t> col_of;  // column of each stored entry
  sparse::Ldlt ldlt;
  bool factored = false;
  std::vector<double> factored_values;
  int factorizations = 0, solves = 0;
  VariableHandle<int> token;

  State(std::string n, sparse::CscMatrix32 p, std::vector<Entry> w, sparse::LdltOptions o)
      : name(std::move(n)), A(std::move(p)), where(std::move(w)), ldlt(std::move(o)), token(0, name + ":token") {}

  // Gathers M's values and makes the factors match them.
  void prepare(const ExtDat<const double>& v) {
    std::vector<double> vals(where.size());
    for (std::size_t e = 0; e < where.size(); ++e) {
      vals[e] = v(where[e].i, where[e].j, where[e].k, where[e].c);
      if (!std::isfinite(vals[e]))
        throw Error("SparseSolve '" + name + "': value of entry " + std::to_string(e) + " is not finite");
    }
    if (factored && std::memcmp(vals.data(), factored_values.data(), vals.size() * sizeof(double)) == 0) return;
    A.values = vals;
    const sparse::FactorInfo& fi = ldlt.factorize(A);
    if (fi.singular) throw Error("SparseSolve '" + name + "': the matrix is singular (static pivots)");
    factored_values = std::move(vals);
    factored = true;
    ++factorizations;
  }
  std::vector<double> solve(const std::vector<double>& b) {
    ++solves;
    return ldlt.solve(b);
  }
  std::vector<double> gather(const ExtDat<const double>& d) const {
    std::vector<double> v(static_cast<std::size_t>(A.n_cols));
    d.for_interior([&](const double& x, long long p) { v[p] = x; });
    return v;
  }
};

namespace {
using D = ExtDat<double>;
using CD = ExtDat<const double>;

void primal(SparseSolve::State& s, const CD& v, const CD& b, const D& x) {
  s.prepare(v);
  std::vector<double> y = s.solve(s.gather(b));
  x.for_interior([&](double& e, long long p) { e = y[p]; });
}

void adjoint(SparseSolve::State& s, const CD& v, const D& vbar, const D& bbar, const CD& x, const D& xbar) {
  s.prepare(v);
  std::vector<double> xb(static_cast<std::size_t>(s.A.n_cols), 0.0);
  if (xbar.valid()) {
    xbar.for_interior([&](double& e, long long p) {
      xb[p] = e;
      e = 0.0;  // consumed
    });
  }
  const std::vector<double> g = s.solve(xb);
  if (bbar.valid()) bbar.for_interior([&](double& e, long long p) { e += g[p]; });
  if (!vbar.valid()) return;
  const std::vector<double> xv = s.gather(x);
  for (std::int32_t q = 0; q < s.A.n_cols; ++q)
    for (std::int32_t e = s.A.col_ptr[q]; e < s.A.col_ptr[q + 1]; ++e) {
      const std::int32_t r = s.A.row_idx[e];
      const double d = r == q ? g[r] * xv[r] : g[r] * xv[q] + g[q] * xv[r];
      const SparseSolve::Entry& w = s.where[e];
      vbar(w.i, w.j, w.k, w.c) -= d;
    }
}

struct OutPrimal {
  SparseSolve::State* s;
  void operator()(const ExternalContext&, CD v, CD b, D x) const { primal(*s, v, b, x); }
};
struct OutAdjoint {
  SparseSolve::State* s;
  void operator()(const ExternalContext&, CD v, D vbar, CD, D bbar, CD x, D xbar) const {
    adjoint(*s, v, vbar, bbar, x, xbar);
  }
};
struct InPrimal {
  SparseSolve::State* s;
  void operator()(const ExternalContext&, CD v, D x) const { primal(*s, v, x, x); }
};
struct InAdjoint {
  SparseSolve::State* s;
  void operator()(const ExternalContext&, CD v, D vbar, CD x, D xbar) const { adjoint(*s, v, vbar, xbar, x, xbar); }
};
}  // namespace

SparseSolve::SparseSolve(std::string name, sparse::CscMatrix32 pattern, std::vector<Entry> where,
                         sparse::LdltOptions opts) {
  require(pattern.symmetric_lower && pattern.n_rows == pattern.n_cols,
          "SparseSolve '" + name + "': the pattern must be square and symmetric_lower");
  require(where.size() == static_cast<std::size_t>(pattern.nnz()),
          "SparseSolve '" + name + "': " + std::to_string(where.size()) + " value locations for " +
              std::to_string(pattern.nnz()) + " stored entries");
  s_ = std::make_unique<State>(std::move(name), std::move(pattern), std::move(where), std::move(opts));
  s_->ldlt.analyze(s_->A);  // the pattern alone
}

SparseSolve::~SparseSolve() = default;

int SparseSolve::factorizations() const { return s_->factorizations; }
int SparseSolve::solves() const { return s_->solves; }
const sparse::Ldlt& SparseSolve::ldlt() const { return s_->ldlt; }

void SparseSolve::solve(mesh::Dat<double>& values, mesh::Dat<double>& b, mesh::Dat<double>& x, bool recompute) {
  const std::string& n = s_->name;
  long long pts = 1;
  for (int k = 0; k < b.dims(); ++k) pts *= b.size(k);
  require(pts == s_->A.n_cols, "SparseSolve '" + n + "': dat '" + b.name() + "' has " + std::to_string(pts) +
                                   " interior points, the matrix " + std::to_string(s_->A.n_cols) + " columns");
  bool same = x.dims() == b.dims();
  for (int k = 0; same && k < b.dims(); ++k) same = x.size(k) == b.size(k) && x.base(k) == b.base(k);
  require(same, "SparseSolve '" + n + "': dats '" + b.name() + "' and '" + x.name() + "' differ in size or base");
  require(b.dim() == 1 && x.dim() == 1, "SparseSolve '" + n + "': b and x have one component");
  for (const Entry& w : s_->where) {
    const int idx[3] = {w.i, w.j, w.k};
    bool in = w.c >= 0 && w.c < values.dim();
    for (int k = 0; in && k < 3; ++k)
      in = k < values.dims() ? idx[k] >= values.base(k) && idx[k] < values.base(k) + values.size(k) : idx[k] == 0;
    require(in, "SparseSolve '" + n + "': a value location lies outside the interior of dat '" + values.name() + "'");
  }
  ExternalOptions opts;
  opts.serialize = &s_->token;
  State* s = s_.get();
  if (&x == &b) {
    if (recompute)
      execute_external_recompute(n, opts, InPrimal{s}, InAdjoint{s}, mesh::arg_dat(values, mesh::READ),
                                 mesh::arg_dat(x, mesh::RW));
    else
      execute_external(n, opts, InPrimal{s}, InAdjoint{s}, mesh::arg_dat(values, mesh::READ),
                       mesh::arg_dat(x, mesh::RW));
    return;
  }
  if (recompute)
    execute_external_recompute(n, opts, OutPrimal{s}, OutAdjoint{s}, mesh::arg_dat(values, mesh::READ),
                               mesh::arg_dat(b, mesh::READ), mesh::arg_dat(x, mesh::WRITE));
  else
    execute_external(n, opts, OutPrimal{s}, OutAdjoint{s}, mesh::arg_dat(values, mesh::READ),
                     mesh::arg_dat(b, mesh::READ), mesh::arg_dat(x, mesh::WRITE));
}

}  // namespace stardiff
