// codelets/cpu/sparse/front_ldlt.cpp — blocked threshold-pivoting LDL^T of a front.
//
// Contract: see front_ldlt.hpp. Structure: passes over the fully-summed columns in
// windows of nb columns. A window first tries the BLAS-3 path (unpivoted LDL^T of the
// diagonal block, dtrsm for the rows below, a posteriori |L| <= 1/u check); if that
// fails the window is restored and factorized column by column with 1x1/2x2 threshold
// pivoting restricted to the window. Failed columns move behind the untried ones; a new
// pass retries them if any pivot was accepted since. After each window the trailing
// matrix (fully-summed rest and contribution block) is updated with one recursive
// lower-triangular dgemm sweep.
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
  thread_local std::vector<double> buf[2];
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

// max |a(i,t)| over rows i in [c, m), i != t, i != ex.
double colmax(const Front& f, int c, int t, int ex) {
  double mx = 0;
  for (int i = c; i < t; ++i)
    if (i != ex) mx = std::max(mx, std::fabs(f.at(t, i)));
  const double* col = &f.at(0, t);
  for (int i = t + 1; i < f.m; ++i)
    if (i != ex) mx = std::max(mx, std::fabs(col[i]));
  return mx;
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

// Threshold pivoting within the window [k, wend); returns the new elimination position.
int window_pivot(const Front& f, int k, int wend, const FrontOptions& o, int* perm, double* d, double* e,
                 signed char* piv, FrontCounts& cnt) {
  int c = k;
  while (c < wend) {
    bool done = false;
    for (int t = c; t < wend && !done; ++t) {
      const double att = f.at(t, t);
      const double mt = colmax(f, c, t, -1);
      if (std::fabs(att) > o.small && std::fabs(att) >= o.u * mt) {
        sym_swap(f, c, t, perm);
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
      if (r < 0) continue;
      const double art = sym(f, r, t), arr = f.at(r, r);
      const double det = att * arr - art * art;
      const double scale = std::max({std::fabs(att), std::fabs(arr), std::fabs(art)});
      if (!(std::fabs(det) > o.small * scale)) continue;
      const double mt2 = colmax(f, c, t, r), mr2 = colmax(f, c, r, t);
      const double adet = std::fabs(det);
      if (o.u * (std::fabs(arr) * mt2 + std::fabs(art) * mr2) <= adet &&
          o.u * (std::fabs(art) * mt2 + std::fabs(att) * mr2) <= adet) {
        sym_swap(f, c, t, perm);
        if (r == c) r = t;
        sym_swap(f, c + 1, r, perm);
        count_2x2(f.at(c, c), f.at(c + 1, c), f.at(c + 1, c + 1), cnt);
        elim2(f, c, wend, d, e, piv);
        c += 2;
        done = true;
      }
    }
    if (!done) break;
  }
  return c;
}

// BLAS-3 window without pivoting; false (window garbage, caller restores) on any failure.
bool fast_window(const Front& f, int k, int wend, const FrontOptions& o, double* d) {
  const int m = f.m;
  for (int j = k; j < wend; ++j) {
    const double dj = f.at(j, j);
    if (!(std::fabs(dj) > o.small)) return false;
    double* colj = &f.at(0, j);
    for (int jj = j + 1; jj < wend; ++jj) {
      const double l = colj[jj] / dj;
      if (l == 0.0) continue;
      double* coljj = &f.at(0, jj);
      for (int i = jj; i < wend; ++i) coljj[i] -= colj[i] * l;
    }
    for (int i = j + 1; i < wend; ++i) colj[i] /= dj;
    d[j] = dj;
  }
  const int nw = wend - k;
  if (wend < m)
    cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasUnit, m - wend, nw, 1.0, &f.at(k, k), m,
                &f.at(wend, k), m);
  const double bound = 1.0 / o.u;
  for (int j = k; j < wend; ++j) {
    double* colj = &f.at(0, j);
    const double inv = d[j];
    for (int i = wend; i < m; ++i) colj[i] /= inv;
    for (int i = j + 1; i < m; ++i)
      if (!(std::fabs(colj[i]) <= bound)) return false;
  }
  return true;
}

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

// Rotates positions [lo, hi) so that [mid, hi) comes first, then [lo, mid).
void rotate_cols(const Front& f, int lo, int mid, int hi, int* perm) {
  const int n = hi - lo, nb = hi - mid;
  std::vector<int> cur(n), where(n);
  std::iota(cur.begin(), cur.end(), 0);
  std::iota(where.begin(), where.end(), 0);
  for (int j = 0; j < n; ++j) {
    const int want = j < nb ? (mid - lo) + j : j - nb;
    const int pj = where[want];
    if (pj == j) continue;
    sym_swap(f, lo + j, lo + pj, perm);
    const int id = cur[j];
    cur[j] = want;
    cur[pj] = id;
    where[want] = j;
    where[id] = pj;
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

}  // namespace

void syrk_lower_ldlt(int m, int k, const double* L, int ldl, const double* W, int ldw, double* C, int ldc) {
  if (m <= 0 || k <= 0) return;
  lower_update(m, k, L, ldl, W, ldw, C, ldc);
}

int front_window_cpu(double* F, int m, int k, int wend, const FrontOptions& o, int* perm, double* d, double* e,
                     signed char* piv, FrontCounts& cnt) {
  Front f{F, m};
  const int nw = wend - k;
  std::vector<double>& backup = scratch(0, std::size_t(m - k) * nw);
  for (int j = 0; j < nw; ++j)
    std::copy(&f.at(k, k + j), &f.at(k, k + j) + (m - k), backup.data() + std::size_t(j) * (m - k));
  if (fast_window(f, k, wend, o, d)) {
    for (int j = k; j < wend; ++j) {
      count_1x1(d[j], cnt);
      e[j] = 0;
      piv[j] = 1;
    }
    return nw;
  }
  for (int j = 0; j < nw; ++j)
    std::copy(backup.data() + std::size_t(j) * (m - k), backup.data() + std::size_t(j + 1) * (m - k), &f.at(k, k + j));
  return window_pivot(f, k, wend, o, perm, d, e, piv, cnt) - k;
}

void front_update_cols_cpu(double* F, int m, int k, int nacc, const double* d, const double* e,
                           const signed char* piv, int c0, int c1) {
  if (nacc <= 0 || c1 <= c0) return;
  Front f{F, m};
  const int nc = c1 - c0;
  std::vector<double>& W = scratch(1, std::size_t(nc) * nacc);
  for (int t = 0; t < nacc; ++t) {
    const int c = k + t;
    const double* lc = &f.at(c0, c);
    double* wc = W.data() + std::size_t(t) * nc;
    if (piv[c] == 2) {
      const double* lc1 = &f.at(c0, c + 1);
      double* wc1 = wc + nc;
      const double a = d[c], b = e[c], cc = d[c + 1];
      for (int i = 0; i < nc; ++i) {
        wc[i] = lc[i] * a + lc1[i] * b;
        wc1[i] = lc[i] * b + lc1[i] * cc;
      }
      ++t;
    } else {
      const double dc = d[c];
      for (int i = 0; i < nc; ++i) wc[i] = lc[i] * dc;
    }
  }
  lower_update(nc, nacc, &f.at(c0, k), m, W.data(), nc, &f.at(c0, c0), m);
  if (c1 < m)
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, m - c1, nc, nacc, -1.0, &f.at(c1, k), m, W.data(), nc, 1.0,
                &f.at(c1, c0), m);
}

int front_ldlt_cpu(double* F, int m, int p, const FrontOptions& o, int* perm, double* d, double* e,
                   signed char* piv, FrontCounts& cnt) {
  Front f{F, m};
  std::iota(perm, perm + m, 0);
  const int nb = std::max(2, o.nb);
  std::vector<double>& backup = scratch(0, 0);
  std::vector<double>& W = scratch(1, 0);
  int k = 0, tail = p;
  std::int64_t acc_pass = 0;
  while (k < p) {
    if (k >= tail) {  // every remaining column failed in this pass
      if (acc_pass == 0) break;
      tail = p;
      acc_pass = 0;
    }
    const int wend = std::min(k + nb, tail), nw = wend - k;
    backup.resize(std::size_t(m - k) * nw);
    for (int j = 0; j < nw; ++j)
      std::copy(&f.at(k, k + j), &f.at(k, k + j) + (m - k), backup.data() + std::size_t(j) * (m - k));
    int nacc;
    if (fast_window(f, k, wend, o, d)) {
      nacc = nw;
      for (int j = k; j < wend; ++j) {
        count_1x1(d[j], cnt);
        e[j] = 0;
        piv[j] = 1;
      }
    } else {
      for (int j = 0; j < nw; ++j)
        std::copy(backup.data() + std::size_t(j) * (m - k), backup.data() + std::size_t(j + 1) * (m - k),
                  &f.at(k, k + j));
      nacc = window_pivot(f, k, wend, o, perm, d, e, piv, cnt) - k;
    }
    // trailing update of columns [wend, m) with the accepted pivots [k, k + nacc)
    if (nacc > 0 && wend < m) {
      const int mr = m - wend;
      W.resize(std::size_t(mr) * nacc);
      for (int t = 0; t < nacc; ++t) {
        const int c = k + t;
        const double* lc = &f.at(wend, c);
        double* wc = W.data() + std::size_t(t) * mr;
        if (piv[c] == 2) {
          const double* lc1 = &f.at(wend, c + 1);
          double* wc1 = wc + mr;
          const double a = d[c], b = e[c], cc = d[c + 1];
          for (int i = 0; i < mr; ++i) {
            wc[i] = lc[i] * a + lc1[i] * b;
            wc1[i] = lc[i] * b + lc1[i] * cc;
          }
          ++t;
        } else {
          const double dc = d[c];
          for (int i = 0; i < mr; ++i) wc[i] = lc[i] * dc;
        }
      }
      syrk_lower_ldlt(mr, nacc, &f.at(wend, k), m, W.data(), mr, &f.at(wend, wend), m);
    }
    const int kk = k + nacc, nf = wend - kk;
    acc_pass += nacc;
    if (nf > 0) {
      if (wend < tail) rotate_cols(f, kk, wend, tail, perm);
      tail -= nf;
    }
    k = kk;
  }
  if (o.force && k < p) k = force_rest(f, k, p, o, perm, d, e, piv, cnt);
  return k;
}

}  // namespace stardiff::cpu
