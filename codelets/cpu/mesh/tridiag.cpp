// SPDX-License-Identifier: LGPL-2.1-or-later
// codelets/cpu/mesh/tridiag.cpp — see tridiag.hpp. Lines are taken in groups of kTridiagGroup
// neighbours along the other axis with the smaller stride of d (rows of a group share cache
// lines); each line's arithmetic is the same whatever its group, so results do not depend on it.
#include "cpu/mesh/tridiag.hpp"

#include <cfloat>
#include <cmath>
#include <cstdlib>

namespace stardiff::cpu {
namespace {

struct Lines {
  int ax, p, q;          // solve axis, group axis, outer axis
  long long n, np, nq;   // their extents
};

Lines lines_of(const TridiagBox& box, const long long* ds) {
  Lines L{};
  L.ax = box.axis;
  const int o1 = box.axis == 0 ? 1 : 0, o2 = box.axis == 2 ? 1 : 2;
  // An axis of extent 1 never groups lines (2-D arrays may give it stride 0).
  const bool swap = box.n[o2] > 1 && (box.n[o1] <= 1 || std::llabs(ds[o2]) < std::llabs(ds[o1]));
  L.p = swap ? o2 : o1;
  L.q = swap ? o1 : o2;
  L.n = box.n[L.ax];
  L.np = box.n[L.p];
  L.nq = box.n[L.q];
  return L;
}

inline bool good_pivot(double m) { return m != 0.0 && std::fabs(m) <= DBL_MAX; }

// Line number (k_lo + n[lo] k_hi) of the line at (kp, kq).
inline long long line_number(const TridiagBox& box, const Lines& L, long long kp, long long kq) {
  return L.p < L.q ? kp + box.n[L.p] * kq : kq + box.n[L.q] * kp;
}

// Strides of one array seen from a group: base offset, step between lines, step between rows.
struct View {
  long long base, sl, si;
};
inline View view(const long long* s, const Lines& L, long long kp0, long long kq) {
  return {kp0 * s[L.p] + kq * s[L.q], s[L.p], s[L.ax]};
}

void note_bad(TridiagStatus& st, const long long* fr, int w, const TridiagBox& box, const Lines& L,
              long long kp0, long long kq) {
  for (int l = 0; l < w; ++l) {
    if (fr[l] < 0) continue;
    const long long line = line_number(box, L, kp0 + l, kq);
    ++st.bad_lines;
    if (st.first_line < 0 || line < st.first_line) {
      st.first_line = line;
      st.first_row = fr[l];
    }
  }
}

bool empty(const TridiagBox& box) { return box.n[0] <= 0 || box.n[1] <= 0 || box.n[2] <= 0; }

}  // namespace

std::size_t tridiag_solve_work_size(const TridiagBox& box) {
  return static_cast<std::size_t>(kTridiagGroup) * static_cast<std::size_t>(box.n[box.axis] > 0 ? box.n[box.axis] : 0);
}
std::size_t tridiag_adjoint_work_size(const TridiagBox& box) { return 2 * tridiag_solve_work_size(box); }

namespace {
// One group of w <= kTridiagGroup lines. Unit: every array's step between lines is 1 (the lines'
// rows are contiguous across the group, so the loops over l vectorise); the arithmetic per line
// is the same either way. Lines touch disjoint elements and x may alias d only element for
// element (read before written), hence ivdep.
template <bool Unit>
void solve_group(long long n, int w, const double* A, const double* B, const double* C, const double* D, double* X,
                 const View& va, const View& vb, const View& vc, const View& vd, const View& vx, double* cp,
                 long long* fr) {
  constexpr int W = kTridiagGroup;
  const long long la = Unit ? 1 : va.sl, lb = Unit ? 1 : vb.sl, lc = Unit ? 1 : vc.sl, ld = Unit ? 1 : vd.sl,
                  lx = Unit ? 1 : vx.sl;
  for (int l = 0; l < w; ++l) {
    const double bb = B[l * lb];
    fr[l] = good_pivot(bb) ? -1 : 0;
    cp[l] = n > 1 ? C[l * lc] / bb : 0.0;
    X[l * lx] = D[l * ld] / bb;
  }
  for (long long i = 1; i < n; ++i) {
    const double* cprev = cp + (i - 1) * W;
    double* ccur = cp + i * W;
    const double *Ai = A + i * va.si, *Bi = B + i * vb.si, *Ci = C + i * vc.si, *Di = D + i * vd.si;
    double* Xi = X + i * vx.si;
    const double* Xp = X + (i - 1) * vx.si;
    const bool last = i == n - 1;
#pragma GCC ivdep
    for (int l = 0; l < w; ++l) {
      const double aa = Ai[l * la];
      const double m = Bi[l * lb] - aa * cprev[l];
      fr[l] = (fr[l] < 0 && !good_pivot(m)) ? i : fr[l];
      ccur[l] = last ? 0.0 : Ci[l * lc] / m;
      Xi[l * lx] = (Di[l * ld] - aa * Xp[l * lx]) / m;
    }
  }
  for (long long i = n - 2; i >= 0; --i) {
    const double* ccur = cp + i * W;
    double* Xi = X + i * vx.si;
    const double* Xn = X + (i + 1) * vx.si;
#pragma GCC ivdep
    for (int l = 0; l < w; ++l) Xi[l * lx] = Xi[l * lx] - ccur[l] * Xn[l * lx];
  }
}
}  // namespace

TridiagStatus tridiag_solve_cpu(const TridiagBox& box, TridiagConstArray a, TridiagConstArray b,
                                TridiagConstArray c, TridiagConstArray d, TridiagArray x, double* work) {
  TridiagStatus st;
  if (empty(box)) return st;
  const Lines L = lines_of(box, d.s);
  const long long n = L.n;
  constexpr int W = kTridiagGroup;
  double* cp = work;  // cp[i W + l]: modified super-diagonal of line l, row i
  for (long long kq = 0; kq < L.nq; ++kq)
    for (long long kp0 = 0; kp0 < L.np; kp0 += W) {
      const int w = static_cast<int>(L.np - kp0 < W ? L.np - kp0 : W);
      const View va = view(a.s, L, kp0, kq), vb = view(b.s, L, kp0, kq), vc = view(c.s, L, kp0, kq),
                 vd = view(d.s, L, kp0, kq), vx = view(x.s, L, kp0, kq);
      const double *A = a.p + va.base, *B = b.p + vb.base, *C = c.p + vc.base, *D = d.p + vd.base;
      double* X = x.p + vx.base;
      long long fr[W];
      if (va.sl == 1 && vb.sl == 1 && vc.sl == 1 && vd.sl == 1 && vx.sl == 1)
        solve_group<true>(n, w, A, B, C, D, X, va, vb, vc, vd, vx, cp, fr);
      else
        solve_group<false>(n, w, A, B, C, D, X, va, vb, vc, vd, vx, cp, fr);
      note_bad(st, fr, w, box, L, kp0, kq);
    }
  return st;
}

namespace {
// The adjoint of one group of w <= kTridiagGroup lines (Unit as in solve_group; every array
// given, the bars included, then has step 1 between lines). Work: w1 = modified super-diagonal
// of A^T, w2 = the forward sweep, then g = A^{-T} xbar.
template <bool Unit>
void adjoint_group(long long n, int w, const double* A, const double* B, const double* C, const double* X,
                   double* XB, const View& va, const View& vb, const View& vc, const View& vx, const View& vxb,
                   bool consume_xbar, double* DB, const View& vdb, double* BB, const View& vbb, double* AB,
                   const View& vab, double* CB, const View& vcb, double* w1, double* w2, long long* fr) {
  constexpr int W = kTridiagGroup;
  const long long la = Unit ? 1 : va.sl, lb = Unit ? 1 : vb.sl, lc = Unit ? 1 : vc.sl, lx = Unit ? 1 : vx.sl,
                  lxb = Unit ? 1 : vxb.sl;
  // Transposed system: sub-diagonal c_{i-1}, diagonal b_i, super-diagonal a_{i+1}.
  for (int l = 0; l < w; ++l) {
    const double bb = B[l * lb];
    fr[l] = good_pivot(bb) ? -1 : 0;
    w1[l] = n > 1 ? A[l * la + va.si] / bb : 0.0;
    const double xb = XB[l * lxb];
    if (consume_xbar) XB[l * lxb] = 0.0;
    w2[l] = xb / bb;
  }
  for (long long i = 1; i < n; ++i) {
    const double *w1p = w1 + (i - 1) * W, *w2p = w2 + (i - 1) * W;
    double *w1c = w1 + i * W, *w2c = w2 + i * W;
    const bool last = i == n - 1;
    const double *Ci = C + (i - 1) * vc.si, *Bi = B + i * vb.si, *An = last ? A : A + (i + 1) * va.si;
    double* XBi = XB + i * vxb.si;
#pragma GCC ivdep
    for (int l = 0; l < w; ++l) {
      const double cc = Ci[l * lc];
      const double m = Bi[l * lb] - cc * w1p[l];
      fr[l] = (fr[l] < 0 && !good_pivot(m)) ? i : fr[l];
      w1c[l] = last ? 0.0 : An[l * la] / m;
      const double xb = XBi[l * lxb];
      w2c[l] = (xb - cc * w2p[l]) / m;
    }
    if (consume_xbar)
      for (int l = 0; l < w; ++l) XBi[l * lxb] = 0.0;
  }
  for (long long i = n - 2; i >= 0; --i) {
    const double* w1c = w1 + i * W;
    double* w2c = w2 + i * W;
    const double* w2n = w2 + (i + 1) * W;
    for (int l = 0; l < w; ++l) w2c[l] = w2c[l] - w1c[l] * w2n[l];
  }
  if (DB) {
    const long long lp = Unit ? 1 : vdb.sl;
    for (long long i = 0; i < n; ++i) {
      double* P = DB + i * vdb.si;
#pragma GCC ivdep
      for (int l = 0; l < w; ++l) P[l * lp] += w2[i * W + l];
    }
  }
  if (BB) {
    const long long lp = Unit ? 1 : vbb.sl;
    for (long long i = 0; i < n; ++i) {
      double* P = BB + i * vbb.si;
      const double* Xi = X + i * vx.si;
#pragma GCC ivdep
      for (int l = 0; l < w; ++l) P[l * lp] -= w2[i * W + l] * Xi[l * lx];
    }
  }
  if (AB) {
    const long long lp = Unit ? 1 : vab.sl;
    for (long long i = 1; i < n; ++i) {
      double* P = AB + i * vab.si;
      const double* Xp = X + (i - 1) * vx.si;
#pragma GCC ivdep
      for (int l = 0; l < w; ++l) P[l * lp] -= w2[i * W + l] * Xp[l * lx];
    }
  }
  if (CB) {
    const long long lp = Unit ? 1 : vcb.sl;
    for (long long i = 0; i < n - 1; ++i) {
      double* P = CB + i * vcb.si;
      const double* Xn = X + (i + 1) * vx.si;
#pragma GCC ivdep
      for (int l = 0; l < w; ++l) P[l * lp] -= w2[i * W + l] * Xn[l * lx];
    }
  }
}
}  // namespace

TridiagStatus tridiag_adjoint_cpu(const TridiagBox& box, TridiagConstArray a, TridiagConstArray b,
                                  TridiagConstArray c, TridiagConstArray x, TridiagArray xbar,
                                  bool consume_xbar, TridiagArray abar, TridiagArray bbar, TridiagArray cbar,
                                  TridiagArray dbar, double* work) {
  TridiagStatus st;
  if (empty(box)) return st;
  const Lines L = lines_of(box, xbar.s);
  const long long n = L.n;
  constexpr int W = kTridiagGroup;
  double* w1 = work;
  double* w2 = work + n * W;
  for (long long kq = 0; kq < L.nq; ++kq)
    for (long long kp0 = 0; kp0 < L.np; kp0 += W) {
      const int w = static_cast<int>(L.np - kp0 < W ? L.np - kp0 : W);
      const View va = view(a.s, L, kp0, kq), vb = view(b.s, L, kp0, kq), vc = view(c.s, L, kp0, kq),
                 vx = view(x.s, L, kp0, kq), vxb = view(xbar.s, L, kp0, kq);
      const View vab = abar.p ? view(abar.s, L, kp0, kq) : View{0, 1, 0},
                 vbb = bbar.p ? view(bbar.s, L, kp0, kq) : View{0, 1, 0},
                 vcb = cbar.p ? view(cbar.s, L, kp0, kq) : View{0, 1, 0},
                 vdb = dbar.p ? view(dbar.s, L, kp0, kq) : View{0, 1, 0};
      double *AB = abar.p ? abar.p + vab.base : nullptr, *BB = bbar.p ? bbar.p + vbb.base : nullptr,
             *CB = cbar.p ? cbar.p + vcb.base : nullptr, *DB = dbar.p ? dbar.p + vdb.base : nullptr;
      long long fr[W];
      const bool unit = va.sl == 1 && vb.sl == 1 && vc.sl == 1 && vx.sl == 1 && vxb.sl == 1 && vab.sl == 1 &&
                        vbb.sl == 1 && vcb.sl == 1 && vdb.sl == 1;
      if (unit)
        adjoint_group<true>(n, w, a.p + va.base, b.p + vb.base, c.p + vc.base, x.p + vx.base, xbar.p + vxb.base,
                            va, vb, vc, vx, vxb, consume_xbar, DB, vdb, BB, vbb, AB, vab, CB, vcb, w1, w2, fr);
      else
        adjoint_group<false>(n, w, a.p + va.base, b.p + vb.base, c.p + vc.base, x.p + vx.base, xbar.p + vxb.base,
                             va, vb, vc, vx, vxb, consume_xbar, DB, vdb, BB, vbb, AB, vab, CB, vcb, w1, w2, fr);
      note_bad(st, fr, w, box, L, kp0, kq);
    }
  return st;
}

}  // namespace stardiff::cpu
