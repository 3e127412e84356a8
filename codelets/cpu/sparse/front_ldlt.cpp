// SPDX-License-Identifier: LGPL-2.1-or-later
// codelets/cpu/sparse/front_ldlt.cpp — blocked threshold-pivoting LDL^T of a front.
//
// Contract: see front_ldlt.hpp. Structure: passes over the fully-summed columns in
// windows of nb columns. Until a window has failed, a window first tries the BLAS-3 path
// (unpivoted LDL^T of the diagonal block and the inverse of its L by recursive halving;
// the rows below times that inverse by dtrmm, or by dtrsm where the inverse is large;
// a posteriori |L| <= 1/u check); otherwise (or if that fails, after restoring it) the
// window is factorized in inner windows of 32 columns, each pivoted column by column with
// 1x1/2x2 threshold pivoting (or unpivoted while the previous inner window took every
// pivot) and applied to the rest of the window as BLAS-3. Failed columns move behind the
// untried ones; a new round/pass retries them if any pivot was accepted since. After
// each window the remaining fully-summed columns are updated; the contribution block is
// updated once at the end with all pivots (long-k recursive lower-triangular dgemm).
#include "cpu/sparse/front_ldlt.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <vector>

namespace stardiff::cpu {
namespace {

// Per-thread scratch buffers (window backups, W = L D blocks), kept between calls: large
// fronts would otherwise allocate — and page-fault — fresh memory for every window.
std::vector<double>& scratch(int which, std::size_t n) {
  thread_local std::vector<double> buf[4];
  if (buf[which].size() < n) buf[which].resize(n);
  return buf[which];
}

struct Front {
  double* F;
  int m;
  double& at(int i, int j) const { return F[std::size_t(i) + std::size_t(j) * std::size_t(m)]; }
};

void sym_swap(const Front& f, int a, int b, int* perm) {
  if (a == b) return;
  if (a > b) std::swap(a, b);
  for (int c = 0; c < a; ++c) std::swap(f.at(a, c), f.at(b, c));
  std::swap(f.at(a, a), f.at(b, b));
  for (int t = a + 1; t < b; ++t) std::swap(f.at(t, a), f.at(b, t));
  for (int i = b + 1; i < f.m; ++i) std::swap(f.at(i, a), f.at(i, b));
  std::swap(perm[a], perm[b]);
}

// Entry (i, t) of the symmetric current matrix (either triangle).
inline double sym(const Front& f, int i, int t) { return i >= t ? f.at(i, t) : f.at(t, i); }

// max |x[i * inc]|, i < n (OpenBLAS's vectorized idamax).
double absmax(const double* x, int n, int inc) {
  if (n <= 0) return 0;
  return std::fabs(x[std::size_t(cblas_idamax(n, x, inc)) * std::size_t(inc)]);
}

// max |a(i,t)| over rows i in [c, m), i != t, i != ex: row t left of the diagonal
// (strided), then column t below it.
double colmax(const Front& f, int c, int t, int ex) {
  auto row = [&](int lo, int hi) { return absmax(&f.at(t, lo), hi - lo, f.m); };
  auto col = [&](int lo, int hi) { return absmax(&f.at(lo, t), hi - lo, 1); };
  if (ex < c || ex == t) return std::max(row(c, t), col(t + 1, f.m));
  if (ex < t) return std::max({row(c, ex), row(ex + 1, t), col(t + 1, f.m)});
  return std::max({row(c, t), col(t + 1, ex), col(ex + 1, f.m)});
}

void count_1x1(double dv, FrontCounts& cnt) {
  if (dv > 0) cnt.pos++;
  else cnt.neg++;
}

// Eliminates the 1x1 pivot at c, updating columns (c, wend) over all rows.
void elim1(const Front& f, int c, int wend, double* d, double* e, signed char* piv) {
  const int m = f.m;
  const double dc = f.at(c, c);
  double* colc = &f.at(0, c);
  for (int j = c + 1; j < wend; ++j) {
    const double lj = colc[j] / dc;
    if (lj == 0.0) continue;
    double* colj = &f.at(0, j);
    for (int i = j; i < m; ++i) colj[i] -= colc[i] * lj;
  }
  for (int i = c + 1; i < m; ++i) colc[i] /= dc;
  d[c] = dc;
  e[c] = 0;
  piv[c] = 1;
}

// Eliminates the 2x2 pivot at (c, c+1), updating columns (c+1, wend) over all rows.
void elim2(const Front& f, int c, int wend, double* d, double* e, signed char* piv) {
  const int m = f.m;
  const double a = f.at(c, c), b = f.at(c + 1, c), cc = f.at(c + 1, c + 1);
  const double det = a * cc - b * b;
  const double ia = cc / det, ib = -b / det, ic = a / det;
  double* c0 = &f.at(0, c);
  double* c1 = &f.at(0, c + 1);
  for (int j = c + 2; j < wend; ++j) {
    const double x0 = c0[j], x1 = c1[j];
    const double l0 = x0 * ia + x1 * ib, l1 = x0 * ib + x1 * ic;
    double* colj = &f.at(0, j);
    for (int i = j; i < m; ++i) colj[i] -= c0[i] * l0 + c1[i] * l1;
  }
  for (int i = c + 2; i < m; ++i) {
    const double x0 = c0[i], x1 = c1[i];
    c0[i] = x0 * ia + x1 * ib;
    c1[i] = x0 * ib + x1 * ic;
  }
  c0[c + 1] = 0;
  d[c] = a;
  d[c + 1] = cc;
  e[c] = b;
  e[c + 1] = 0;
  piv[c] = 2;
  piv[c + 1] = 3;
}

void count_2x2(double a, double b, double cc, FrontCounts& cnt) {
  double det = a * cc - b * b;
  cnt.two_by_two++;
  if (det < 0) {
    cnt.pos++;
    cnt.neg++;
  } else if (a + cc > 0) {
    cnt.pos += 2;
  } else {
    cnt.neg += 2;
  }
}

// What a failed pivot test saw, per column (indexed by original local index): the test
// is repeated only after the column or its 2x2 partner changed. A column changes only when
// an eliminated pivot column has a nonzero in its row — so in sparse-ish fronts most
// retests are skipped, with exactly the outcome a retest would have had.
struct PivotMemo {
  std::vector<int> ver, tested, partner, partner_ver;
};

// Threshold pivoting within the window [k, wend); returns the new elimination position.
// Candidates are tested in position order, restarting after every accepted pivot.
int window_pivot(const Front& f, int k, int wend, const FrontOptions& o, int* perm, double* d, double* e,
                 signed char* piv, FrontCounts& cnt) {
  thread_local PivotMemo pm;
  if (pm.ver.size() < std::size_t(f.m)) {
    pm.ver.resize(f.m), pm.tested.resize(f.m), pm.partner.resize(f.m), pm.partner_ver.resize(f.m);
  }
  for (int t = k; t < wend; ++t) pm.ver[perm[t]] = 0, pm.tested[perm[t]] = -1;
  auto unchanged = [&](int t) {
    const int id = perm[t], r = pm.partner[id];
    return pm.tested[id] == pm.ver[id] && (r < 0 || pm.partner_ver[id] == pm.ver[r]);
  };
  auto failed = [&](int t, int r) {
    const int id = perm[t];
    pm.tested[id] = pm.ver[id];
    pm.partner[id] = r < 0 ? -1 : perm[r];
    if (r >= 0) pm.partner_ver[id] = pm.ver[perm[r]];
  };
  auto touch = [&](int c, int np) {  // before eliminating pivots [c, c + np): who changes
    for (int j = c + np; j < wend; ++j)
      if (f.at(j, c) != 0.0 || (np == 2 && f.at(j, c + 1) != 0.0)) pm.ver[perm[j]]++;
  };
  int c = k;
  while (c < wend) {
    bool done = false;
    for (int t = c; t < wend && !done; ++t) {
      if (unchanged(t)) continue;
      const double att = f.at(t, t);
      const double mt = colmax(f, c, t, -1);
      if (std::fabs(att) > o.small && std::fabs(att) >= o.u * mt) {
        sym_swap(f, c, t, perm);
        touch(c, 1);
        count_1x1(f.at(c, c), cnt);
        elim1(f, c, wend, d, e, piv);
        c += 1;
        done = true;
        break;
      }
      // 2x2 with the largest entry of column t inside the window
      int r = -1;
      double best = 0;
      for (int i = c; i < wend; ++i) {
        if (i == t) continue;
        double v = std::fabs(sym(f, i, t));
        if (v > best) {
          best = v;
          r = i;
        }
      }
      bool ok = false;
      double art = 0, arr = 0, det = 0;
      if (r >= 0) {
        art = sym(f, r, t), arr = f.at(r, r);
        det = att * arr - art * art;
        const double scale = std::max({std::fabs(att), std::fabs(arr), std::fabs(art)});
        ok = std::fabs(det) > o.small * scale;
      }
      if (ok) {
        const double mt2 = colmax(f, c, t, r), mr2 = colmax(f, c, r, t);
        const double adet = std::fabs(det);
        ok = o.u * (std::fabs(arr) * mt2 + std::fabs(art) * mr2) <= adet &&
             o.u * (std::fabs(art) * mt2 + std::fabs(att) * mr2) <= adet;
      }
      if (!ok) {
        failed(t, r);
        continue;
      }
      sym_swap(f, c, t, perm);
      if (r == c) r = t;
      sym_swap(f, c + 1, r, perm);
      touch(c, 2);
      count_2x2(f.at(c, c), f.at(c + 1, c), f.at(c + 1, c + 1), cnt);
      elim2(f, c, wend, d, e, piv);
      c += 2;
      done = true;
    }
    if (!done) break;
  }
  return c;
}

// Below this many rows x columns, a hand loop replaces dtrsm: OpenBLAS's dtrsm takes a
// process-wide lock for its work buffers on every call, which on fronts of a few columns
// costs more than the arithmetic and serializes the workers (small dgemm does not).
constexpr int kTinyWork = 256;

// Recursive C(lower n x n) -= L W^T.
void lower_update(int n, int k, const double* L, int ldl, const double* W, int ldw, double* C, int ldc) {
  if (n <= 64) {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n, k, -1.0, L, ldl, W, ldw, 1.0, C, ldc);
    return;
  }
  int h = n / 2;
  lower_update(h, k, L, ldl, W, ldw, C, ldc);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n - h, h, k, -1.0, L + h, ldl, W, ldw, 1.0, C + h, ldc);
  lower_update(n - h, k, L + h, ldl, W + h, ldw, C + h + std::size_t(h) * ldc, ldc);
}

// Largest |X(i, j)| over the strictly lower triangle of an n x n block.
double lower_absmax(const double* X, int ldx, int n) {
  double mx = 0;
  for (int j = 0; j + 1 < n; ++j) mx = std::max(mx, absmax(X + std::size_t(j) * ldx + j + 1, n - j - 1, 1));
  return mx;
}

// Above this max|L^-1(i, j)| max|L(i, j)|, B L^-T is computed by substitution (dtrsm)
// rather than as B (L^-1)^T (dtrmm): the product's residual grows with |B| |L^-1| |L|
// (Du Croz and Higham), substitution's only with |B L^-T| |L|.
constexpr double kInverseBound = 1e3;

// B := B L^-T for a unit lower n x n block L (ld ldl) with inverse X (ld ldx); B is
// rows x n (ld ldb). OpenBLAS's dtrmm is faster than its dtrsm on these shapes, so X is
// used where its entries and L's are moderate.
void solve_right(int rows, int n, const double* L, int ldl, const double* X, int ldx, double* B, int ldb) {
  if (lower_absmax(X, ldx, n) * std::max(1.0, lower_absmax(L, ldl, n)) <= kInverseBound)
    cblas_dtrmm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasUnit, rows, n, 1.0, X, ldx, B, ldb);
  else
    cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasUnit, rows, n, 1.0, L, ldl, B, ldb);
}

// Unpivoted LDL^T of the n x n diagonal block A (ld lda, lower): A = L D L^T with unit L
// stored below the diagonal and D in d, and with `inverse` X = L^-1 (unit lower, ld ldx;
// its diagonal and strict lower triangle written; without, X is scratch: each level still
// inverts its leading half for its own rows below). Recursive halving, so all but 32 x 32
// leaves is BLAS-3. False as soon as a pivot has |d| <= small (A and X are garbage then).
bool diag_ldlt(double* A, int lda, int n, double* d, double small, double* X, int ldx, bool inverse) {
  if (n <= 32) {
    for (int j = 0; j < n; ++j) {
      double* colj = A + std::size_t(j) * lda;
      const double dj = colj[j];
      if (!(std::fabs(dj) > small)) return false;
      for (int jj = j + 1; jj < n; ++jj) {
        const double l = colj[jj] / dj;
        if (l == 0.0) continue;
        double* coljj = A + std::size_t(jj) * lda;
        for (int i = jj; i < n; ++i) coljj[i] -= colj[i] * l;
      }
      for (int i = j + 1; i < n; ++i) colj[i] /= dj;
      d[j] = dj;
    }
    if (!inverse) return true;
    for (int j = 0; j < n; ++j) {  // X(:, j) solves L x = e_j (forward substitution)
      double* xj = X + std::size_t(j) * ldx;
      xj[j] = 1;
      std::fill(xj + j + 1, xj + n, 0.0);
      for (int t = j; t < n; ++t) {
        const double xt = xj[t];
        if (xt == 0.0) continue;
        const double* lt = A + std::size_t(t) * lda;
        for (int i = t + 1; i < n; ++i) xj[i] -= lt[i] * xt;
      }
    }
    return true;
  }
  const int h = n / 2, r = n - h;
  if (!diag_ldlt(A, lda, h, d, small, X, ldx, true)) return false;
  double* A21 = A + h;
  double* A22 = A + h + std::size_t(h) * lda;
  // A21 := A21 L11^-T = L21 D1 (kept in W), then L21 = W D1^-1, A22 -= L21 W^T.
  solve_right(r, h, A, lda, X, ldx, A21, lda);
  std::vector<double>& W = scratch(2, std::size_t(r) * h);
  for (int j = 0; j < h; ++j) {
    double* a = A21 + std::size_t(j) * lda;
    double* w = W.data() + std::size_t(j) * r;
    const double inv = d[j];
    for (int i = 0; i < r; ++i) {
      w[i] = a[i];
      a[i] /= inv;
    }
  }
  lower_update(r, h, A21, lda, W.data(), r, A22, lda);
  double* X21 = X + h;
  double* X22 = X + h + std::size_t(h) * ldx;
  if (!diag_ldlt(A22, lda, r, d + h, small, X22, ldx, inverse)) return false;
  if (!inverse) return true;
  // X21 = -X22 L21 X11
  for (int j = 0; j < h; ++j) {
    const double* l21 = A21 + std::size_t(j) * lda;
    std::copy(l21, l21 + r, X21 + std::size_t(j) * ldx);
  }
  cblas_dtrmm(CblasColMajor, CblasRight, CblasLower, CblasNoTrans, CblasUnit, r, h, 1.0, X, ldx, X21, ldx);
  cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, r, h, -1.0, X22, ldx, X21, ldx);
  return true;
}

// BLAS-3 window without pivoting; false (window garbage, caller restores) on any failure.
bool fast_window(const Front& f, int k, int wend, const FrontOptions& o, double* d) {
  const int m = f.m;
  const int nw = wend - k;
  std::vector<double>& X = scratch(3, std::size_t(nw) * nw);
  const bool tiny = (m - wend) * nw <= kTinyWork;  // rows below, if any, by a hand loop
  if (!diag_ldlt(&f.at(k, k), m, nw, d + k, o.small, X.data(), nw, !tiny)) return false;
  if (wend < m && tiny) {  // A21 := A21 L11^-T, column by column
    for (int t = 0; t < nw; ++t) {
      const double* ct = &f.at(0, k + t);  // L11(:, t) above, final A21(:, t) below
      for (int j = t + 1; j < nw; ++j) {
        const double l = ct[k + j];
        if (l == 0.0) continue;
        double* cj = &f.at(0, k + j);
        for (int i = wend; i < m; ++i) cj[i] -= ct[i] * l;
      }
    }
  } else if (wend < m) {
    solve_right(m - wend, nw, &f.at(k, k), m, X.data(), nw, &f.at(wend, k), m);
  }
  const double bound = o.unpivoted ? INFINITY : 1.0 / o.u;
  for (int j = k; j < wend; ++j) {
    double* colj = &f.at(0, j);
    const double inv = d[j];
    for (int i = wend; i < m; ++i) colj[i] /= inv;
    for (int i = j + 1; i < m; ++i)
      if (!(std::fabs(colj[i]) <= bound)) return false;  // also catches NaN
  }
  return true;
}

// Moves the columns at [lo, mid) behind those at [mid, hi) with as few symmetric swaps
// as possible: [lo, mid) trades places with the last min(mid - lo, hi - mid) positions
// (the order among the columns behind `mid` is not kept).
void rotate_cols(const Front& f, int lo, int mid, int hi, int* perm) {
  const int nf = mid - lo, rest = hi - mid;
  if (rest >= nf) {
    for (int i = 0; i < nf; ++i) sym_swap(f, lo + i, hi - nf + i, perm);
  } else {
    for (int i = 0; i < rest; ++i) sym_swap(f, lo + i, mid + i, perm);
  }
}

// Root: eliminate every remaining fully-summed column [c, p).
int force_rest(const Front& f, int c, int p, const FrontOptions& o, int* perm, double* d, double* e,
               signed char* piv, FrontCounts& cnt) {
  while (c < p) {
    int t = c;
    double best = -1;
    for (int j = c; j < p; ++j) {
      double v = std::fabs(f.at(j, j));
      if (v > best) {
        best = v;
        t = j;
      }
    }
    // prefer a threshold-acceptable 2x2 with the largest partner when diagonals are small
    int r = -1;
    double bo = 0;
    for (int i = c; i < p; ++i) {
      if (i == t) continue;
      double v = std::fabs(sym(f, i, t));
      if (v > bo) {
        bo = v;
        r = i;
      }
    }
    if (best > o.small && best >= o.u * bo) {
      sym_swap(f, c, t, perm);
      count_1x1(f.at(c, c), cnt);
      elim1(f, c, p, d, e, piv);
      c += 1;
      continue;
    }
    if (r >= 0) {
      const double att = f.at(t, t), arr = f.at(r, r), art = sym(f, r, t);
      const double det = att * arr - art * art;
      if (std::fabs(det) > o.small * std::max({std::fabs(att), std::fabs(arr), std::fabs(art)})) {
        sym_swap(f, c, t, perm);
        if (r == c) r = t;
        sym_swap(f, c + 1, r, perm);
        count_2x2(f.at(c, c), f.at(c + 1, c), f.at(c + 1, c + 1), cnt);
        elim2(f, c, p, d, e, piv);
        c += 2;
        continue;
      }
    }
    if (best > o.small) {
      sym_swap(f, c, t, perm);
      count_1x1(f.at(c, c), cnt);
      elim1(f, c, p, d, e, piv);
      c += 1;
      continue;
    }
    // static pivot: sign kept, counted as a zero eigenvalue
    const double s = f.at(c, c) < 0 ? -1.0 : 1.0;
    f.at(c, c) = s * o.static_piv;
    elim1(f, c, p, d, e, piv);
    piv[c] = 0;
    cnt.zero++;
    cnt.static_pivots++;
    c += 1;
  }
  return c;
}

// W (rows r0..r1 of the pivots [k, k + nacc), ld = r1 - r0) = L D, 2x2 blocks included.
void times_d(const Front& f, int k, int nacc, const double* d, const double* e, const signed char* piv, int r0,
             int r1, double* W) {
  const int nr = r1 - r0;
  for (int t = 0; t < nacc; ++t) {
    const int c = k + t;
    const double* lc = &f.at(r0, c);
    double* wc = W + std::size_t(t) * nr;
    if (piv[c] == 2) {
      const double* lc1 = &f.at(r0, c + 1);
      double* wc1 = wc + nr;
      const double a = d[c], b = e[c], cc = d[c + 1];
      for (int i = 0; i < nr; ++i) {
        wc[i] = lc[i] * a + lc1[i] * b;
        wc1[i] = lc[i] * b + lc1[i] * cc;
      }
      ++t;
    } else {
      const double dc = d[c];
      for (int i = 0; i < nr; ++i) wc[i] = lc[i] * dc;
    }
  }
}

// Columns [c0, c1) (rows >= column) -= L(:, K) D L(c0:c1, K)^T for K = [k, k + nacc).
void update_cols(const Front& f, int k, int nacc, const double* d, const double* e, const signed char* piv, int c0,
                 int c1) {
  if (nacc <= 0 || c1 <= c0) return;
  const int m = f.m, nc = c1 - c0;
  std::vector<double>& W = scratch(1, std::size_t(nc) * nacc);
  times_d(f, k, nacc, d, e, piv, c0, c1, W.data());
  lower_update(nc, nacc, &f.at(c0, k), m, W.data(), nc, &f.at(c0, c0), m);
  if (c1 < m)
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, m - c1, nc, nacc, -1.0, &f.at(c1, k), m, W.data(), nc, 1.0,
                &f.at(c1, c0), m);
}

// Contribution block [p, m) (lower) -= L D L^T with all pivots [0, nelim), in chunks of
// pivots (each chunk one recursive lower-triangular dgemm sweep with a long k).
void update_cb(const Front& f, int p, int nelim, const double* d, const double* e, const signed char* piv) {
  const int m = f.m, nr = m - p;
  if (nr <= 0 || nelim <= 0) return;
  constexpr int kc = 384;
  for (int k = 0; k < nelim;) {
    int k1 = std::min(k + kc, nelim);
    if (k1 < nelim && piv[k1 - 1] == 2) ++k1;  // keep a 2x2 pivot in one chunk
    std::vector<double>& W = scratch(1, std::size_t(nr) * (k1 - k));
    times_d(f, k, k1 - k, d, e, piv, p, m, W.data());
    lower_update(nr, k1 - k, &f.at(p, k), m, W.data(), nr, &f.at(p, p), m);
    k = k1;
  }
}

// Unpivoted BLAS-3 attempt on [k, wend) (backup, fast_window, restore on failure).
bool try_fast(const Front& f, int k, int wend, const FrontOptions& o, double* d, double* e, signed char* piv,
              FrontCounts& cnt) {
  const int nw = wend - k, rows = f.m - k;
  std::vector<double>& backup = scratch(0, o.unpivoted ? 0 : std::size_t(rows) * nw);
  if (!o.unpivoted)  // an unpivoted front stops at a failure: nothing to restore
    for (int j = 0; j < nw; ++j)
      std::copy(&f.at(k, k + j), &f.at(k, k + j) + rows, backup.data() + std::size_t(j) * rows);
  if (fast_window(f, k, wend, o, d)) {
    for (int j = k; j < wend; ++j) {
      count_1x1(d[j], cnt);
      e[j] = 0;
      piv[j] = 1;
    }
    return true;
  }
  if (!o.unpivoted)
    for (int j = 0; j < nw; ++j)
      std::copy(backup.data() + std::size_t(j) * rows, backup.data() + std::size_t(j + 1) * rows, &f.at(k, k + j));
  return false;
}

// Windows of `width` over the columns [k, end): factor(c, j1) factors window [c, j1) and
// returns how many pivots it accepted (accepted first, failed after them; -1: stop here),
// update(c, nacc, j1) brings the columns after the window up to date with them; failed
// columns move behind the untried ones and are retried while a round accepts pivots.
// Returns the position after the last accepted pivot.
template <class Factor, class Update>
int sweep_windows(const Front& f, int k, int end, int width, int* perm, Factor&& factor, Update&& update) {
  int c = k, tail = end;
  std::int64_t acc_round = 0;
  while (c < end) {
    if (c >= tail) {  // every remaining column failed in this round
      if (acc_round == 0) break;
      tail = end;
      acc_round = 0;
    }
    const int j1 = std::min(c + width, tail);
    const int nacc = factor(c, j1);
    if (nacc < 0) break;
    update(c, nacc, j1);
    const int nf = (j1 - c) - nacc;
    if (nf > 0) {
      if (j1 < tail) rotate_cols(f, c + nacc, j1, tail, perm);
      tail -= nf;
    }
    acc_round += nacc;
    c += nacc;
  }
  return c;
}

// Window [k, wend) with pivoting, in inner windows of 32 columns: each inner window is
// pivoted column by column, or tried unpivoted first while the previous inner window took
// all its pivots (the first is pivoted: this runs after a failed attempt), then the
// rest of the window gets its update as BLAS-3. Returns the number accepted (accepted
// first, failed after them, all current); only window columns are updated.
int blocked_window(const Front& f, int k, int wend, const FrontOptions& o, int* perm, double* d, double* e,
                   signed char* piv, FrontCounts& cnt) {
  bool fast = false;
  auto factor = [&](int c, int j1) {
    if (fast && try_fast(f, c, j1, o, d, e, piv, cnt)) return j1 - c;
    const int nacc = window_pivot(f, c, j1, o, perm, d, e, piv, cnt) - c;
    fast = nacc == j1 - c;
    return nacc;
  };
  auto update = [&](int c, int nacc, int j1) { update_cols(f, c, nacc, d, e, piv, j1, wend); };
  return sweep_windows(f, k, wend, 32, perm, factor, update) - k;
}

}  // namespace

int front_window_cpu(double* F, int m, int k, int wend, const FrontOptions& o, int* perm, double* d, double* e,
                     signed char* piv, FrontCounts& cnt) {
  Front f{F, m};
  if (try_fast(f, k, wend, o, d, e, piv, cnt)) return wend - k;
  return o.unpivoted ? 0 : blocked_window(f, k, wend, o, perm, d, e, piv, cnt);
}

void front_update_cols_cpu(double* F, int m, int k, int nacc, const double* d, const double* e,
                           const signed char* piv, int c0, int c1) {
  update_cols(Front{F, m}, k, nacc, d, e, piv, c0, c1);
}

void front_times_d_cpu(const double* F, int m, int k, int nacc, const double* d, const double* e,
                       const signed char* piv, int r0, int r1, double* W) {
  times_d(Front{const_cast<double*>(F), m}, k, nacc, d, e, piv, r0, r1, W);  // times_d only reads F
}

int front_ldlt_cpu(double* F, int m, int p, const FrontOptions& o, int* perm, double* d, double* e,
                   signed char* piv, FrontCounts& cnt) {
  Front f{F, m};
  std::iota(perm, perm + m, 0);
  bool clean = true;  // no window has failed the unpivoted attempt yet
  auto factor = [&](int k, int wend) {
    if (clean && try_fast(f, k, wend, o, d, e, piv, cnt)) return wend - k;
    if (o.unpivoted) return -1;  // window [k, wend) is garbage; the caller discards the front
    clean = false;
    return blocked_window(f, k, wend, o, perm, d, e, piv, cnt);
  };
  // the remaining fully-summed columns after each window; the contribution block at the end
  auto update = [&](int k, int nacc, int wend) { update_cols(f, k, nacc, d, e, piv, wend, p); };
  int k = sweep_windows(f, 0, p, std::max(2, o.nb), perm, factor, update);
  if (o.unpivoted && k < p) return k;  // stopped at a bad pivot
  if (o.force && k < p) k = force_rest(f, k, p, o, perm, d, e, piv, cnt);
  update_cb(f, p, k, d, e, piv);
  return k;
}

}  // namespace stardiff::cpu
