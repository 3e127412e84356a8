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

TridiagStatus tridiag_adjoint_cpu(const TridiagBox& box, TridiagConstArray a, TridiagConstArray b,
                                  TridiagConstArray c, TridiagConstArray x, TridiagArray xbar,
                                  bool consume_xbar, TridiagArray abar, TridiagArray bbar, TridiagArray cbar,
                                  TridiagArray dbar, double* work) {
  TridiagStatus st;
  if (empty(box)) return st;
  const Lines L = lines_of(box, xbar.s);
  const long long n = L.n;
  constexpr int W = kTridiagGroup;
  double* w1 = work;                   // modified super-diagonal of A^T (from a_{i+1})
  double* w2 = work + n * W;           // forward sweep, then g = A^{-T} xbar
  for (long long kq = 0; kq < L.nq; ++kq)
    for (long long kp0 = 0; kp0 < L.np; kp0 += W) {
      const int w = static_cast<int>(L.np - kp0 < W ? L.np - kp0 : W);
      const View va = view(a.s, L, kp0, kq), vb = view(b.s, L, kp0, kq), vc = view(c.s, L, kp0, kq),
                 vx = view(x.s, L, kp0, kq), vxb = view(xbar.s, L, kp0, kq);
      const double *A = a.p + va.base, *B = b.p + vb.base, *C = c.p + vc.base, *X = x.p + vx.base;
      double* XB = xbar.p + vxb.base;
      long long fr[W];
      // Transposed system: sub-diagonal c_{i-1}, diagonal b_i, super-diagonal a_{i+1}.
      for (int l = 0; l < w; ++l) {
        const double bb = B[l * vb.sl];
        fr[l] = good_pivot(bb) ? -1 : 0;
        w1[l] = n > 1 ? A[l * va.sl + va.si] / bb : 0.0;
        const double xb = XB[l * vxb.sl];
        if (consume_xbar) XB[l * vxb.sl] = 0.0;
        w2[l] = xb / bb;
      }
      for (long long i = 1; i < n; ++i) {
        const double *w1p = w1 + (i - 1) * W, *w2p = w2 + (i - 1) * W;
        double *w1c = w1 + i * W, *w2c = w2 + i * W;
        for (int l = 0; l < w; ++l) {
          const double cc = C[l * vc.sl + (i - 1) * vc.si];
          const double m = B[l * vb.sl + i * vb.si] - cc * w1p[l];
          fr[l] = (fr[l] < 0 && !good_pivot(m)) ? i : fr[l];
          w1c[l] = i < n - 1 ? A[l * va.sl + (i + 1) * va.si] / m : 0.0;
          const double xb = XB[l * vxb.sl + i * vxb.si];
          if (consume_xbar) XB[l * vxb.sl + i * vxb.si] = 0.0;
          w2c[l] = (xb - cc * w2p[l]) / m;
        }
      }
      for (long long i = n - 2; i >= 0; --i) {
        const double* w1c = w1 + i * W;
        double* w2c = w2 + i * W;
        const double* w2n = w2 + (i + 1) * W;
        for (int l = 0; l < w; ++l) w2c[l] = w2c[l] - w1c[l] * w2n[l];
      }
      if (dbar.p) {
        const View v = view(dbar.s, L, kp0, kq);
        double* P = dbar.p + v.base;
        for (long long i = 0; i < n; ++i)
          for (int l = 0; l < w; ++l) P[l * v.sl + i * v.si] += w2[i * W + l];
      }
      if (bbar.p) {
        const View v = view(bbar.s, L, kp0, kq);
        double* P = bbar.p + v.base;
        for (long long i = 0; i < n; ++i)
          for (int l = 0; l < w; ++l) P[l * v.sl + i * v.si] -= w2[i * W + l] * X[l * vx.sl + i * vx.si];
      }
      if (abar.p) {
        const View v = view(abar.s, L, kp0, kq);
        double* P = abar.p + v.base;
        for (long long i = 1; i < n; ++i)
          for (int l = 0; l < w; ++l) P[l * v.sl + i * v.si] -= w2[i * W + l] * X[l * vx.sl + (i - 1) * vx.si];
      }
      if (cbar.p) {
        const View v = view(cbar.s, L, kp0, kq);
        double* P = cbar.p + v.base;
        for (long long i = 0; i < n - 1; ++i)
          for (int l = 0; l < w; ++l) P[l * v.sl + i * v.si] -= w2[i * W + l] * X[l * vx.sl + (i + 1) * vx.si];
      }
      note_bad(st, fr, w, box, L, kp0, kq);
    }
  return st;
}

}  // namespace stardiff::cpu
