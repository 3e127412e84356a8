// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/forward/dual.hpp — forward-mode dual numbers Dual<N, T>: a value and N partials.
//
// Contract:
//  * Dual<N, T> holds `v` (the value) and `d[N]` (the partials, a plain array, so the
//    compiler unrolls and vectorises the per-partial loops). T is double, float or another
//    Dual (nesting: Dual<M, Dual<N>> carries second derivatives).
//  * Arithmetic + - * / with duals and scalars (arithmetic types or T), compound forms,
//    unary minus; comparisons look at the value only.
//  * Elementary functions (found by ADL: write `using std::sin; sin(x)` in code templated
//    on the scalar type so that double and Dual both work): sin cos tan asin acos atan
//    atan2 sinh cosh tanh asinh acosh atanh exp expm1 exp2 log log1p log2 log10 sqrt cbrt
//    pow (dual^scalar, scalar^dual, dual^dual) abs fabs hypot fmin fmax erf, and
//    sin_cos(x, s, c) (both at the cost of one of each on the value).
//    Derivatives at kinks: abs(x) at x == 0 gives +dx; fmin/fmax pick the first operand
//    on ties; pow(a, b) with a == 0 drops the log(a)·db term.
//  * The value part of every operation is computed exactly as the same expression on T
//    would be (a / b, not a * (1 / b)), so F evaluated on duals equals F on double bitwise.
//  * Everything is constexpr-free, header-only and STARDIFF_HD (__host__ __device__
//    under nvcc, empty otherwise), valid C++17 so CUDA translation units can use it.
//  * value(x) gives the innermost double/float value of a scalar or (nested) dual.
#pragma once
#include <cmath>
#include <type_traits>

#ifndef STARDIFF_HD
#if defined(__CUDACC__)
#define STARDIFF_HD __host__ __device__
#else
#define STARDIFF_HD
#endif
#endif

#if defined(__CUDACC__)
#define STARDIFF_UNROLL _Pragma("unroll")
#elif defined(__GNUC__) && !defined(__clang__)
#define STARDIFF_UNROLL _Pragma("GCC unroll 16")
#else
#define STARDIFF_UNROLL
#endif

namespace stardiff::forward {

template <int N, class T = double>
struct Dual {
  static_assert(N >= 1, "Dual<N>: N must be at least 1");
  using value_type = T;
  static constexpr int size = N;

  T v;
  T d[N];

  STARDIFF_HD Dual() : v(0) {
    STARDIFF_UNROLL for (int i = 0; i < N; ++i) d[i] = T(0);
  }
  // A constant: value c, zero partials. Implicit so that `S y = 1.0;` works for S = Dual.
  template <class U, std::enable_if_t<std::is_arithmetic_v<U> || std::is_same_v<U, T>, int> = 0>
  STARDIFF_HD Dual(const U& c) : v(T(c)) {
    STARDIFF_UNROLL for (int i = 0; i < N; ++i) d[i] = T(0);
  }
  // A seeded variable: value c, partial k set to 1 (k outside [0, N): a constant).
  STARDIFF_HD Dual(const T& c, int k) : v(c) {
    STARDIFF_UNROLL for (int i = 0; i < N; ++i) d[i] = T(i == k ? 1 : 0);
  }

  STARDIFF_HD Dual& operator+=(const Dual& b) {
    v += b.v;
    STARDIFF_UNROLL for (int i = 0; i < N; ++i) d[i] += b.d[i];
    return *this;
  }
  STARDIFF_HD Dual& operator-=(const Dual& b) {
    v -= b.v;
    STARDIFF_UNROLL for (int i = 0; i < N; ++i) d[i] -= b.d[i];
    return *this;
  }
  STARDIFF_HD Dual& operator*=(const Dual& b) {
    STARDIFF_UNROLL for (int i = 0; i < N; ++i) d[i] = d[i] * b.v + v * b.d[i];
    v *= b.v;
    return *this;
  }
  STARDIFF_HD Dual& operator/=(const Dual& b) {
    const T inv = T(1) / b.v;
    v = v / b.v;
    STARDIFF_UNROLL for (int i = 0; i < N; ++i) d[i] = (d[i] - v * b.d[i]) * inv;
    return *this;
  }
  template <class U, std::enable_if_t<std::is_arithmetic_v<U> || std::is_same_v<U, T>, int> = 0>
  STARDIFF_HD Dual& operator+=(const U& c) {
    v += T(c);
    return *this;
  }
  template <class U, std::enable_if_t<std::is_arithmetic_v<U> || std::is_same_v<U, T>, int> = 0>
  STARDIFF_HD Dual& operator-=(const U& c) {
    v -= T(c);
    return *this;
  }
  template <class U, std::enable_if_t<std::is_arithmetic_v<U> || std::is_same_v<U, T>, int> = 0>
  STARDIFF_HD Dual& operator*=(const U& c) {
    const T s(c);
    v *= s;
    STARDIFF_UNROLL for (int i = 0; i < N; ++i) d[i] *= s;
    return *this;
  }
  template <class U, std::enable_if_t<std::is_arithmetic_v<U> || std::is_same_v<U, T>, int> = 0>
  STARDIFF_HD Dual& operator/=(const U& c) {
    const T inv = T(1) / T(c);
    v = v / T(c);
    STARDIFF_UNROLL for (int i = 0; i < N; ++i) d[i] *= inv;
    return *this;
  }
};

// ---- traits -------------------------------------------------------------------------
template <class X> struct is_dual : std::false_type {};
template <int N, class T> struct is_dual<Dual<N, T>> : std::true_type {};
template <class X> inline constexpr bool is_dual_v = is_dual<X>::value;

// U may stand as a constant next to Dual<N, T>: an arithmetic type or T itself.
template <class U, class T>
inline constexpr bool is_dual_scalar_v = std::is_arithmetic_v<U> || std::is_same_v<U, T>;
#define STARDIFF_DUAL_SCALAR(U, T) std::enable_if_t<::stardiff::forward::is_dual_scalar_v<U, T>, int> = 0

// Innermost value.
template <class X, std::enable_if_t<std::is_arithmetic_v<X>, int> = 0>
STARDIFF_HD inline X value(const X& x) { return x; }
template <int N, class T>
STARDIFF_HD inline auto value(const Dual<N, T>& x) { return value(x.v); }

// ---- arithmetic ---------------------------------------------------------------------
template <int N, class T>
STARDIFF_HD inline Dual<N, T> operator+(const Dual<N, T>& a) { return a; }
template <int N, class T>
STARDIFF_HD inline Dual<N, T> operator-(const Dual<N, T>& a) {
  Dual<N, T> r;
  r.v = -a.v;
  STARDIFF_UNROLL for (int i = 0; i < N; ++i) r.d[i] = -a.d[i];
  return r;
}
template <int N, class T>
STARDIFF_HD inline Dual<N, T> operator+(const Dual<N, T>& a, const Dual<N, T>& b) {
  Dual<N, T> r;
  r.v = a.v + b.v;
  STARDIFF_UNROLL for (int i = 0; i < N; ++i) r.d[i] = a.d[i] + b.d[i];
  return r;
}
template <int N, class T>
STARDIFF_HD inline Dual<N, T> operator-(const Dual<N, T>& a, const Dual<N, T>& b) {
  Dual<N, T> r;
  r.v = a.v - b.v;
  STARDIFF_UNROLL for (int i = 0; i < N; ++i) r.d[i] = a.d[i] - b.d[i];
  return r;
}
template <int N, class T>
STARDIFF_HD inline Dual<N, T> operator*(const Dual<N, T>& a, const Dual<N, T>& b) {
  Dual<N, T> r;
  r.v = a.v * b.v;
  STARDIFF_UNROLL for (int i = 0; i < N; ++i) r.d[i] = a.d[i] * b.v + a.v * b.d[i];
  return r;
}
template <int N, class T>
STARDIFF_HD inline Dual<N, T> operator/(const Dual<N, T>& a, const Dual<N, T>& b) {
  Dual<N, T> r;
  const T inv = T(1) / b.v;
  r.v = a.v / b.v;
  STARDIFF_UNROLL for (int i = 0; i < N; ++i) r.d[i] = (a.d[i] - r.v * b.d[i]) * inv;
  return r;
}
template <int N, class T, class U, STARDIFF_DUAL_SCALAR(U, T)>
STARDIFF_HD inline Dual<N, T> operator+(const Dual<N, T>& a, const U& c) {
  Dual<N, T> r = a;
  r.v += T(c);
  return r;
}
template <int N, class T, class U, STARDIFF_DUAL_SCALAR(U, T)>
STARDIFF_HD inline Dual<N, T> operator+(const U& c, const Dual<N, T>& a) {
  Dual<N, T> r = a;
  r.v = T(c) + r.v;
  return r;
}
template <int N, class T, class U, STARDIFF_DUAL_SCALAR(U, T)>
STARDIFF_HD inline Dual<N, T> operator-(const Dual<N, T>& a, const U& c) {
  Dual<N, T> r = a;
  r.v -= T(c);
  return r;
}
template <int N, class T, class U, STARDIFF_DUAL_SCALAR(U, T)>
STARDIFF_HD inline Dual<N, T> operator-(const U& c, const Dual<N, T>& a) {
  Dual<N, T> r;
  r.v = T(c) - a.v;
  STARDIFF_UNROLL for (int i = 0; i < N; ++i) r.d[i] = -a.d[i];
  return r;
}
template <int N, class T, class U, STARDIFF_DUAL_SCALAR(U, T)>
STARDIFF_HD inline Dual<N, T> operator*(const Dual<N, T>& a, const U& c) {
  Dual<N, T> r;
  const T s(c);
  r.v = a.v * s;
  STARDIFF_UNROLL for (int i = 0; i < N; ++i) r.d[i] = a.d[i] * s;
  return r;
}
template <int N, class T, class U, STARDIFF_DUAL_SCALAR(U, T)>
STARDIFF_HD inline Dual<N, T> operator*(const U& c, const Dual<N, T>& a) {
  Dual<N, T> r;
  const T s(c);
  r.v = s * a.v;
  STARDIFF_UNROLL for (int i = 0; i < N; ++i) r.d[i] = s * a.d[i];
  return r;
}
template <int N, class T, class U, STARDIFF_DUAL_SCALAR(U, T)>
STARDIFF_HD inline Dual<N, T> operator/(const Dual<N, T>& a, const U& c) {
  Dual<N, T> r;
  const T inv = T(1) / T(c);
  r.v = a.v / T(c);
  STARDIFF_UNROLL for (int i = 0; i < N; ++i) r.d[i] = a.d[i] * inv;
  return r;
}
template <int N, class T, class U, STARDIFF_DUAL_SCALAR(U, T)>
STARDIFF_HD inline Dual<N, T> operator/(const U& c, const Dual<N, T>& a) {
  Dual<N, T> r;
  const T inv = T(1) / a.v;
  r.v = T(c) / a.v;
  const T s = -r.v * inv;
  STARDIFF_UNROLL for (int i = 0; i < N; ++i) r.d[i] = s * a.d[i];
  return r;
}

// ---- comparisons (on the value) -----------------------------------------------------
#define STARDIFF_DUAL_CMP(OP)                                                              \
  template <int N, class T>                                                                \
  STARDIFF_HD inline bool operator OP(const Dual<N, T>& a, const Dual<N, T>& b) {          \
    return a.v OP b.v;                                                                     \
  }                                                                                        \
  template <int N, class T, class U, STARDIFF_DUAL_SCALAR(U, T)>                           \
  STARDIFF_HD inline bool operator OP(const Dual<N, T>& a, const U& c) {                   \
    return a.v OP T(c);                                                                    \
  }                                                                                        \
  template <int N, class T, class U, STARDIFF_DUAL_SCALAR(U, T)>                           \
  STARDIFF_HD inline bool operator OP(const U& c, const Dual<N, T>& a) {                   \
    return T(c) OP a.v;                                                                    \
  }
STARDIFF_DUAL_CMP(==)
STARDIFF_DUAL_CMP(!=)
STARDIFF_DUAL_CMP(<)
STARDIFF_DUAL_CMP(<=)
STARDIFF_DUAL_CMP(>)
STARDIFF_DUAL_CMP(>=)
#undef STARDIFF_DUAL_CMP

// ---- elementary functions -----------------------------------------------------------
namespace detail {
// r = f(a) given f = f(a.v) and df = f'(a.v): r.d = df * a.d.
template <int N, class T>
STARDIFF_HD inline Dual<N, T> chain(const Dual<N, T>& a, const T& f, const T& df) {
  Dual<N, T> r;
  r.v = f;
  STARDIFF_UNROLL for (int i = 0; i < N; ++i) r.d[i] = df * a.d[i];
  return r;
}
// r = f(a, b) given df/da and df/db.
template <int N, class T>
STARDIFF_HD inline Dual<N, T> chain2(const Dual<N, T>& a, const Dual<N, T>& b, const T& f,
                                     const T& dfa, const T& dfb) {
  Dual<N, T> r;
  r.v = f;
  STARDIFF_UNROLL for (int i = 0; i < N; ++i) r.d[i] = dfa * a.d[i] + dfb * b.d[i];
  return r;
}
}  // namespace detail

// Each function evaluates the underlying math on T through ADL + std (so nested duals
// recurse into these same overloads).
#define STARDIFF_DUAL_FN1(NAME, F_EXPR, DF_EXPR)      \
  template <int N, class T>                           \
  STARDIFF_HD inline Dual<N, T> NAME(const Dual<N, T>& a) { \
    using std::sin; using std::cos; using std::tan; using std::sqrt; using std::exp;         \
    using std::log; using std::cosh; using std::sinh; using std::tanh; using std::asin;      \
    using std::acos; using std::atan; using std::expm1; using std::log1p; using std::cbrt;   \
    using std::exp2; using std::log2; using std::log10; using std::asinh; using std::acosh;  \
    using std::atanh; using std::erf;                                                        \
    const T& x = a.v;                                 \
    const T f = F_EXPR;                               \
    return detail::chain(a, f, T(DF_EXPR));           \
  }

STARDIFF_DUAL_FN1(sin, sin(x), cos(x))
STARDIFF_DUAL_FN1(cos, cos(x), -sin(x))
STARDIFF_DUAL_FN1(tan, tan(x), T(1) + f * f)
STARDIFF_DUAL_FN1(asin, asin(x), T(1) / sqrt(T(1) - x * x))
STARDIFF_DUAL_FN1(acos, acos(x), T(-1) / sqrt(T(1) - x * x))
STARDIFF_DUAL_FN1(atan, atan(x), T(1) / (T(1) + x * x))
STARDIFF_DUAL_FN1(sinh, sinh(x), cosh(x))
STARDIFF_DUAL_FN1(cosh, cosh(x), sinh(x))
STARDIFF_DUAL_FN1(tanh, tanh(x), T(1) - f * f)
STARDIFF_DUAL_FN1(asinh, asinh(x), T(1) / sqrt(x * x + T(1)))
STARDIFF_DUAL_FN1(acosh, acosh(x), T(1) / sqrt(x * x - T(1)))
STARDIFF_DUAL_FN1(atanh, atanh(x), T(1) / (T(1) - x * x))
STARDIFF_DUAL_FN1(exp, exp(x), f)
STARDIFF_DUAL_FN1(expm1, expm1(x), f + T(1))
STARDIFF_DUAL_FN1(exp2, exp2(x), f * T(0.693147180559945309417232121458176568))
STARDIFF_DUAL_FN1(log, log(x), T(1) / x)
STARDIFF_DUAL_FN1(log1p, log1p(x), T(1) / (T(1) + x))
STARDIFF_DUAL_FN1(log2, log2(x), T(1) / (x * T(0.693147180559945309417232121458176568)))
STARDIFF_DUAL_FN1(log10, log10(x), T(1) / (x * T(2.30258509299404568401799145468436421)))
STARDIFF_DUAL_FN1(sqrt, sqrt(x), T(0.5) / f)
STARDIFF_DUAL_FN1(cbrt, cbrt(x), T(1) / (T(3) * f * f))
STARDIFF_DUAL_FN1(erf, erf(x), T(1.12837916709551257389615890312154517) * exp(-(x * x)))
#undef STARDIFF_DUAL_FN1

template <int N, class T>
STARDIFF_HD inline Dual<N, T> abs(const Dual<N, T>& a) {
  return a.v < T(0) ? -a : a;
}
template <int N, class T>
STARDIFF_HD inline Dual<N, T> fabs(const Dual<N, T>& a) {
  return a.v < T(0) ? -a : a;
}

// pow: dual^scalar, scalar^dual, dual^dual.
template <int N, class T, class U, STARDIFF_DUAL_SCALAR(U, T)>
STARDIFF_HD inline Dual<N, T> pow(const Dual<N, T>& a, const U& p) {
  using std::pow;
  const T pp(p);
  const T f = pow(a.v, pp);
  const T df = pp == T(0) ? T(0) : pp * pow(a.v, pp - T(1));
  return detail::chain(a, f, df);
}
template <int N, class T, class U, STARDIFF_DUAL_SCALAR(U, T)>
STARDIFF_HD inline Dual<N, T> pow(const U& c, const Dual<N, T>& b) {
  using std::log;
  using std::pow;
  const T cc(c);
  const T f = pow(cc, b.v);
  const T df = cc == T(0) ? T(0) : f * log(cc);
  return detail::chain(b, f, df);
}
template <int N, class T>
STARDIFF_HD inline Dual<N, T> pow(const Dual<N, T>& a, const Dual<N, T>& b) {
  using std::log;
  using std::pow;
  const T f = pow(a.v, b.v);
  const T dfa = b.v * pow(a.v, b.v - T(1));
  const T dfb = a.v == T(0) ? T(0) : f * log(a.v);
  return detail::chain2(a, b, f, dfa, dfb);
}

template <int N, class T>
STARDIFF_HD inline Dual<N, T> atan2(const Dual<N, T>& y, const Dual<N, T>& x) {
  using std::atan2;
  const T f = atan2(y.v, x.v);
  const T inv = T(1) / (x.v * x.v + y.v * y.v);
  return detail::chain2(y, x, f, x.v * inv, -y.v * inv);
}
template <int N, class T>
STARDIFF_HD inline Dual<N, T> hypot(const Dual<N, T>& a, const Dual<N, T>& b) {
  using std::hypot;
  const T f = hypot(a.v, b.v);
  const T inv = T(1) / f;
  return detail::chain2(a, b, f, a.v * inv, b.v * inv);
}
template <int N, class T>
STARDIFF_HD inline Dual<N, T> fmin(const Dual<N, T>& a, const Dual<N, T>& b) {
  return b.v < a.v ? b : a;
}
template <int N, class T>
STARDIFF_HD inline Dual<N, T> fmax(const Dual<N, T>& a, const Dual<N, T>& b) {
  return a.v < b.v ? b : a;
}
// Mixed dual/scalar forms of the two-argument functions.
#define STARDIFF_DUAL_FN2_MIXED(NAME)                                                  \
  template <int N, class T, class U, STARDIFF_DUAL_SCALAR(U, T)>                      \
  STARDIFF_HD inline Dual<N, T> NAME(const Dual<N, T>& a, const U& c) {               \
    return NAME(a, Dual<N, T>(T(c)));                                                 \
  }                                                                                   \
  template <int N, class T, class U, STARDIFF_DUAL_SCALAR(U, T)>                      \
  STARDIFF_HD inline Dual<N, T> NAME(const U& c, const Dual<N, T>& a) {               \
    return NAME(Dual<N, T>(T(c)), a);                                                 \
  }
STARDIFF_DUAL_FN2_MIXED(atan2)
STARDIFF_DUAL_FN2_MIXED(hypot)
STARDIFF_DUAL_FN2_MIXED(fmin)
STARDIFF_DUAL_FN2_MIXED(fmax)
#undef STARDIFF_DUAL_FN2_MIXED

// sin and cos of one argument together: one sine and one cosine of the value (calling
// sin() and cos() on a dual evaluates each twice). Works for arithmetic types and
// (nested) duals; call it qualified: stardiff::forward::sin_cos(t, s, c).
template <class X, std::enable_if_t<std::is_arithmetic_v<X>, int> = 0>
STARDIFF_HD inline void sin_cos(const X& x, X& s, X& c) {
  using std::cos;
  using std::sin;
  s = sin(x);
  c = cos(x);
}
template <int N, class T>
STARDIFF_HD inline void sin_cos(const Dual<N, T>& a, Dual<N, T>& s, Dual<N, T>& c) {
  T sv, cv;
  sin_cos(a.v, sv, cv);
  const T msv = -sv;
  s = detail::chain(a, sv, cv);
  c = detail::chain(a, cv, msv);
}

// ---- seeding and extraction helpers ---------------------------------------------------
// A variable with value x and partial k = 1 (k outside [0, N): constant).
template <int N, class T = double>
STARDIFF_HD inline Dual<N, T> seed(const T& x, int k) { return Dual<N, T>(x, k); }

}  // namespace stardiff::forward
