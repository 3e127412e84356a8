// SPDX-License-Identifier: LGPL-2.1-or-later
// src/adjoint/external_tridiag.cpp — tridiag_solve as an external function (see tridiag.hpp):
// the batched Thomas kernels of codelets/cpu/mesh/tridiag on tile views or gathered copies.
#include "stardiff/adjoint/tridiag.hpp"

#include <algorithm>
#include <vector>

#include "cpu/mesh/tridiag.hpp"
#include "stardiff/adjoint/external.hpp"

namespace stardiff {
namespace {

using cpu::TridiagArray;
using cpu::TridiagBox;
using cpu::TridiagConstArray;
using cpu::TridiagStatus;
using mesh::READ;
using mesh::RW;
using mesh::WRITE;
using D = ExtDat<double>;
using CD = ExtDat<const double>;

// The interior box of the call: block dims, solve axis, base and size per dimension.
struct Geo {
  int dims = 1, axis = 0;
  int base[3] = {0, 0, 0}, size[3] = {1, 1, 1};
  int outer() const { return dims - 1; }
  long long points() const { return 1LL * size[0] * size[1] * size[2]; }
};

// Owned interior rows of tile t along the outer axis.
template <class E>
void rows(const E& e, int t, const Geo& G, int& r0, int& r1) {
  r0 = std::max(e.row_lo(t), G.base[G.outer()]);
  r1 = std::min(e.row_hi(t), G.base[G.outer()] + G.size[G.outer()]);
}

// Element (base, ..., row r0) of tile t and the strides.
template <class E>
TridiagArray tile_array(const E& e, int t, const Geo& G, int r0) {
  if (!e.valid()) return {nullptr, {0, 0, 0}};
  const auto& g = e.geom(t);
  long long idx[3] = {G.base[0], G.base[1], G.base[2]};
  idx[G.outer()] = r0;
  double* p = const_cast<double*>(e.data(t)) + g.origin + idx[0] * g.s[0] + idx[1] * g.s[1] + idx[2] * g.s[2];
  return {p, {g.s[0], g.s[1], g.s[2]}};
}
TridiagConstArray cview(const TridiagArray& a) { return {a.p, {a.s[0], a.s[1], a.s[2]}}; }

// Gathered copy of the interior (x fastest) over all tiles of the task, and back.
template <class E, class F>
void for_tile_points(const E& e, const Geo& G, F f) {
  for (int t = e.tile_lo(); t < e.tile_hi(); ++t) {
    int r0, r1;
    rows(e, t, G, r0, r1);
    if (r0 >= r1) continue;
    TridiagArray a = tile_array(e, t, G, r0);
    long long n[3] = {G.size[0], G.size[1], G.size[2]}, off[3] = {0, 0, 0};
    n[G.outer()] = r1 - r0;
    off[G.outer()] = r0 - G.base[G.outer()];
    for (long long k = 0; k < n[2]; ++k)
      for (long long j = 0; j < n[1]; ++j)
        for (long long i = 0; i < n[0]; ++i) {
          const long long c = (i + off[0]) + G.size[0] * ((j + off[1]) + G.size[1] * (k + off[2]));
          f(a.p[i * a.s[0] + j * a.s[1] + k * a.s[2]], c);
        }
  }
}
struct Gathered {
  std::vector<double> v;
  TridiagArray arr(const Geo& G) {
    return v.empty() ? TridiagArray{nullptr, {0, 0, 0}}
                     : TridiagArray{v.data(), {1, G.size[0], 1LL * G.size[0] * G.size[1]}};
  }
};
template <class E>
Gathered gather(const E& e, const Geo& G) {
  Gathered g;
  if (!e.valid()) return g;
  g.v.resize(static_cast<std::size_t>(G.points()));
  for_tile_points(e, G, [&](double& x, long long c) { g.v[c] = x; });
  return g;
}
void scatter(const D& e, const Geo& G, const Gathered& g) {
  if (e.valid()) for_tile_points(e, G, [&](double& x, long long c) { x = g.v[c]; });
}

TridiagBox box_of(const Geo& G, long long outer_rows) {
  TridiagBox b{{G.size[0], G.size[1], G.size[2]}, G.axis};
  b.n[G.outer()] = outer_rows;
  return b;
}

void check(const TridiagStatus& st, const ExternalContext& ctx) {
  if (!st.ok())
    throw Error("tridiag_solve '" + std::string(ctx.name) + "': zero or non-finite pivot on " +
                std::to_string(st.bad_lines) + " line(s), first line " + std::to_string(st.first_line) +
                " (of tile " + std::to_string(ctx.tile_lo) + "'s part), row " + std::to_string(st.first_row));
}

// Lines along the outer axis cross tiles: gathered, unless the task holds the only tile.
bool gathered(const Geo& G, const ExternalContext& ctx) { return G.axis == G.outer() && ctx.tile_hi - ctx.tile_lo > 1; }

// Work space of the Thomas kernels, kept per thread between calls (large buffers would
// otherwise be mapped and faulted in afresh by every call).
double* work_buffer(std::size_t n) {
  thread_local std::vector<double> buf;
  if (buf.size() < n) buf.resize(n);
  return buf.data();
}

// x = A^{-1} d (x may be d's storage).
void solve(const ExternalContext& ctx, const Geo& G, const CD& a, const CD& b, const CD& c, const CD& d, const D& x) {
  if (gathered(G, ctx)) {
    Gathered ga = gather(a, G), gb = gather(b, G), gc = gather(c, G), gd = gather(d, G);
    const TridiagBox box = box_of(G, G.size[G.outer()]);
    double* work = work_buffer(cpu::tridiag_solve_work_size(box));
    check(cpu::tridiag_solve_cpu(box, cview(ga.arr(G)), cview(gb.arr(G)), cview(gc.arr(G)), cview(gd.arr(G)),
                                 gd.arr(G), work),
          ctx);
    scatter(x, G, gd);
    return;
  }
  for (int t = ctx.tile_lo; t < ctx.tile_hi; ++t) {
    int r0, r1;
    rows(x, t, G, r0, r1);
    if (r0 >= r1) continue;
    const TridiagBox box = box_of(G, r1 - r0);
    double* work = work_buffer(cpu::tridiag_solve_work_size(box));
    check(cpu::tridiag_solve_cpu(box, cview(tile_array(a, t, G, r0)), cview(tile_array(b, t, G, r0)),
                                 cview(tile_array(c, t, G, r0)), cview(tile_array(d, t, G, r0)),
                                 tile_array(x, t, G, r0), work),
          ctx);
  }
}

// The adjoint: xbar consumed; in place (xbar and dbar the same storage) dbar = g.
void adjoint(const ExternalContext& ctx, const Geo& G, const CD& a, const D& abar, const CD& b, const D& bbar,
             const CD& c, const D& cbar, const CD& x, const D& xbar, const D& dbar, bool inplace) {
  if (gathered(G, ctx)) {
    Gathered ga = gather(a, G), gb = gather(b, G), gc = gather(c, G), gx = gather(x, G), gxb = gather(xbar, G);
    Gathered gab = gather(abar, G), gbb = gather(bbar, G), gcb = gather(cbar, G);
    Gathered gdb = inplace ? Gathered{} : gather(dbar, G);
    Gathered& dst = inplace ? gxb : gdb;
    const TridiagBox box = box_of(G, G.size[G.outer()]);
    double* work = work_buffer(cpu::tridiag_adjoint_work_size(box));
    check(cpu::tridiag_adjoint_cpu(box, cview(ga.arr(G)), cview(gb.arr(G)), cview(gc.arr(G)), cview(gx.arr(G)),
                                   gxb.arr(G), true, gab.arr(G), gbb.arr(G), gcb.arr(G), dst.arr(G), work),
          ctx);
    scatter(abar, G, gab);
    scatter(bbar, G, gbb);
    scatter(cbar, G, gcb);
    scatter(xbar, G, gxb);  // in place: g; otherwise zeros (consumed)
    if (!inplace) scatter(dbar, G, gdb);
    return;
  }
  for (int t = ctx.tile_lo; t < ctx.tile_hi; ++t) {
    int r0, r1;
    rows(x, t, G, r0, r1);
    if (r0 >= r1) continue;
    const TridiagBox box = box_of(G, r1 - r0);
    double* work = work_buffer(cpu::tridiag_adjoint_work_size(box));
    TridiagArray xb = tile_array(xbar, t, G, r0);
    check(cpu::tridiag_adjoint_cpu(box, cview(tile_array(a, t, G, r0)), cview(tile_array(b, t, G, r0)),
                                   cview(tile_array(c, t, G, r0)), cview(tile_array(x, t, G, r0)), xb, true,
                                   tile_array(abar, t, G, r0), tile_array(bbar, t, G, r0),
                                   tile_array(cbar, t, G, r0), inplace ? xb : tile_array(dbar, t, G, r0),
                                   work),
          ctx);
  }
}

struct OutPrimal {
  Geo G;
  void operator()(const ExternalContext& ctx, CD a, CD b, CD c, CD d, D x) const { solve(ctx, G, a, b, c, d, x); }
};
struct OutAdjoint {
  Geo G;
  void operator()(const ExternalContext& ctx, CD a, D abar, CD b, D bbar, CD c, D cbar, CD, D dbar, CD x,
                  D xbar) const {
    adjoint(ctx, G, a, abar, b, bbar, c, cbar, x, xbar, dbar, false);
  }
};
struct InPrimal {
  Geo G;
  void operator()(const ExternalContext& ctx, CD a, CD b, CD c, D d) const {
    solve(ctx, G, a, b, c, d, d);
  }
};
struct InAdjoint {
  Geo G;
  void operator()(const ExternalContext& ctx, CD a, D abar, CD b, D bbar, CD c, D cbar, CD x, D xbar) const {
    adjoint(ctx, G, a, abar, b, bbar, c, cbar, x, xbar, xbar, true);
  }
};

}  // namespace

void tridiag_solve(const std::string& name, int axis, mesh::Dat<double>& a, mesh::Dat<double>& b,
                   mesh::Dat<double>& c, mesh::Dat<double>& d, mesh::Dat<double>& x, bool recompute) {
  Geo G;
  G.dims = d.dims();
  G.axis = axis;
  require(axis >= 0 && axis < G.dims, "tridiag_solve '" + name + "': axis " + std::to_string(axis) +
                                          " is not an axis of the " + std::to_string(G.dims) + "-D dat '" +
                                          d.name() + "'");
  for (int k = 0; k < G.dims; ++k) {
    G.base[k] = d.base(k);
    G.size[k] = d.size(k);
  }
  for (mesh::DatBase* p : {static_cast<mesh::DatBase*>(&a), static_cast<mesh::DatBase*>(&b),
                           static_cast<mesh::DatBase*>(&c), static_cast<mesh::DatBase*>(&x)}) {
    bool same = p->dims() == G.dims;
    for (int k = 0; same && k < G.dims; ++k) same = p->size(k) == G.size[k] && p->base(k) == G.base[k];
    require(same, "tridiag_solve '" + name + "': dat '" + p->name() + "' differs from '" + d.name() +
                      "' in size or base");
  }
  for (mesh::DatBase* p : {static_cast<mesh::DatBase*>(&a), static_cast<mesh::DatBase*>(&b),
                           static_cast<mesh::DatBase*>(&c), static_cast<mesh::DatBase*>(&d)})
    require(p->dim() == 1, "tridiag_solve '" + name + "': dat '" + p->name() + "' has several components");
  ExternalOptions opts;
  opts.per_tile = axis != G.outer();
  if (&x == &d) {
    if (recompute)
      execute_external_recompute(name, opts, InPrimal{G}, InAdjoint{G}, mesh::arg_dat(a, READ), mesh::arg_dat(b, READ),
                                 mesh::arg_dat(c, READ), mesh::arg_dat(d, RW));
    else
      execute_external(name, opts, InPrimal{G}, InAdjoint{G}, mesh::arg_dat(a, READ), mesh::arg_dat(b, READ),
                       mesh::arg_dat(c, READ), mesh::arg_dat(d, RW));
    return;
  }
  if (recompute)
    execute_external_recompute(name, opts, OutPrimal{G}, OutAdjoint{G}, mesh::arg_dat(a, READ), mesh::arg_dat(b, READ),
                               mesh::arg_dat(c, READ), mesh::arg_dat(d, READ), mesh::arg_dat(x, WRITE));
  else {
    opts.adjoint_reads = 0b00111u;  // a, b, c (and the saved x); never d
    execute_external(name, opts, OutPrimal{G}, OutAdjoint{G}, mesh::arg_dat(a, READ), mesh::arg_dat(b, READ),
                     mesh::arg_dat(c, READ), mesh::arg_dat(d, READ), mesh::arg_dat(x, WRITE));
  }
}

}  // namespace stardiff
