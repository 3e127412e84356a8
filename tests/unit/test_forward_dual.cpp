// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_forward_dual.cpp — Dual<N>: every elementary function against central
// finite differences and its analytic derivative, arithmetic identities, mixed scalar
// forms, value faithfulness (dual value == double evaluation bitwise) and nested duals
// giving second derivatives (Hessian of small functions vs analytic formulas).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "stardiff/forward/dual.hpp"

using namespace stardiff::forward;
using D = Dual<3>;

namespace {

struct Fn1 {
  std::string name;
  std::function<D(const D&)> fd;
  std::function<double(double)> f;
  std::function<double(double)> df;  // analytic derivative
  std::vector<double> at;
};

#define FN1(NAME, DF)                                                                       \
  Fn1 {                                                                                     \
    #NAME, [](const D& a) { return NAME(a); }, [](double x) { return std::NAME(x); }, DF, \
        { -0.7, 0.3, 0.9 }                                                                  \
  }
#define FN1_AT(NAME, DF, ...)                                                               \
  Fn1 {                                                                                     \
    #NAME, [](const D& a) { return NAME(a); }, [](double x) { return std::NAME(x); }, DF, \
        { __VA_ARGS__ }                                                                     \
  }

std::vector<Fn1> functions() {
  return {
      FN1(sin, [](double x) { return std::cos(x); }),
      FN1(cos, [](double x) { return -std::sin(x); }),
      FN1(tan, [](double x) { return 1.0 / (std::cos(x) * std::cos(x)); }),
      FN1(asin, [](double x) { return 1.0 / std::sqrt(1 - x * x); }),
      FN1(acos, [](double x) { return -1.0 / std::sqrt(1 - x * x); }),
      FN1(atan, [](double x) { return 1.0 / (1 + x * x); }),
      FN1(sinh, [](double x) { return std::cosh(x); }),
      FN1(cosh, [](double x) { return std::sinh(x); }),
      FN1(tanh, [](double x) { return 1.0 / (std::cosh(x) * std::cosh(x)); }),
      FN1(asinh, [](double x) { return 1.0 / std::sqrt(x * x + 1); }),
      FN1_AT(acosh, [](double x) { return 1.0 / std::sqrt(x * x - 1); }, 1.2, 2.5, 7.0),
      FN1(atanh, [](double x) { return 1.0 / (1 - x * x); }),
      FN1(exp, [](double x) { return std::exp(x); }),
      FN1(expm1, [](double x) { return std::exp(x); }),
      FN1(exp2, [](double x) { return std::log(2.0) * std::exp2(x); }),
      FN1_AT(log, [](double x) { return 1.0 / x; }, 0.2, 1.0, 3.5),
      FN1(log1p, [](double x) { return 1.0 / (1 + x); }),
      FN1_AT(log2, [](double x) { return 1.0 / (x * std::log(2.0)); }, 0.2, 1.0, 3.5),
      FN1_AT(log10, [](double x) { return 1.0 / (x * std::log(10.0)); }, 0.2, 1.0, 3.5),
      FN1_AT(sqrt, [](double x) { return 0.5 / std::sqrt(x); }, 0.2, 1.0, 3.5),
      FN1(cbrt, [](double x) { return 1.0 / (3 * std::cbrt(x) * std::cbrt(x)); }),
      FN1(erf, [](double x) { return 2 / std::sqrt(M_PI) * std::exp(-x * x); }),
      FN1(abs, [](double x) { return x < 0 ? -1.0 : 1.0; }),
      FN1(fabs, [](double x) { return x < 0 ? -1.0 : 1.0; }),
  };
}

double central(const std::function<double(double)>& f, double x) {
  const double h = 1e-6 * std::max(1.0, std::abs(x));
  return (f(x + h) - f(x - h)) / (2 * h);
}

// Relative check with an absolute floor.
void expect_close(double got, double want, double rtol, const std::string& what) {
  EXPECT_LE(std::abs(got - want), rtol * std::max(1.0, std::abs(want))) << what << ": got " << got << " want " << want;
}

}  // namespace

TEST(ForwardDual, ElementaryFunctionsMatchFiniteDifferencesAndAnalytic) {
  for (const auto& fn : functions()) {
    for (double x : fn.at) {
      const D a(x, 1);  // partial 1 seeded; partials 0 and 2 stay zero
      const D r = fn.fd(a);
      const std::string what = fn.name + "(" + std::to_string(x) + ")";
      EXPECT_EQ(r.v, fn.f(x)) << what << " value";
      expect_close(r.d[1], fn.df(x), 1e-14, what + " analytic");
      expect_close(r.d[1], central(fn.f, x), 1e-8, what + " central FD");
      EXPECT_EQ(r.d[0], 0.0) << what;
      EXPECT_EQ(r.d[2], 0.0) << what;
    }
  }
}

TEST(ForwardDual, ChainRuleScalesByInnerDerivative) {
  // d/dx sin(3x^2) = 6x cos(3x^2), two directions at once
  const double x = 0.4;
  D a(x, 0);
  a.d[2] = -2.0;
  const D r = sin(3.0 * a * a);
  EXPECT_NEAR(r.d[0], 6 * x * std::cos(3 * x * x), 1e-15);
  EXPECT_NEAR(r.d[2], -2 * 6 * x * std::cos(3 * x * x), 1e-15);
  EXPECT_EQ(r.d[1], 0.0);
}

TEST(ForwardDual, ArithmeticAndMixedScalars) {
  const double x = 1.3, y = -0.6;
  const D a(x, 0), b(y, 1);
  struct Case {
    const char* name;
    D r;
    double v, dx, dy;
  };
  const Case cases[] = {
      {"a+b", a + b, x + y, 1, 1},
      {"a-b", a - b, x - y, 1, -1},
      {"a*b", a * b, x * y, y, x},
      {"a/b", a / b, x / y, 1 / y, -x / (y * y)},
      {"-a", -a, -x, -1, 0},
      {"+a", +a, x, 1, 0},
      {"a+2", a + 2, x + 2, 1, 0},
      {"2+a", 2 + a, 2 + x, 1, 0},
      {"a-2.5", a - 2.5, x - 2.5, 1, 0},
      {"2.5-a", 2.5 - a, 2.5 - x, -1, 0},
      {"a*3", a * 3, 3 * x, 3, 0},
      {"3*b", 3 * b, 3 * y, 0, 3},
      {"a/4", a / 4.0, x / 4, 0.25, 0},
      {"4/b", 4.0 / b, 4 / y, 0, -4 / (y * y)},
      {"pow(a,2.5)", pow(a, 2.5), std::pow(x, 2.5), 2.5 * std::pow(x, 1.5), 0},
      {"pow(a,2)", pow(a, 2), std::pow(x, 2), 2 * x, 0},
      {"pow(a,0)", pow(a, 0), 1, 0, 0},
      {"pow(2,b)", pow(2.0, b), std::pow(2.0, y), 0, std::log(2.0) * std::pow(2.0, y)},
      {"pow(a,b)", pow(a, b), std::pow(x, y), y * std::pow(x, y - 1), std::log(x) * std::pow(x, y)},
      {"atan2(b,a)", atan2(b, a), std::atan2(y, x), -y / (x * x + y * y), x / (x * x + y * y)},
      {"atan2(b,2)", atan2(b, 2.0), std::atan2(y, 2.0), 0, 2 / (4 + y * y)},
      {"atan2(2,a)", atan2(2.0, a), std::atan2(2.0, x), -2 / (x * x + 4), 0},
      {"hypot(a,b)", hypot(a, b), std::hypot(x, y), x / std::hypot(x, y), y / std::hypot(x, y)},
      {"hypot(a,1)", hypot(a, 1.0), std::hypot(x, 1.0), x / std::hypot(x, 1.0), 0},
      {"fmin(a,b)", fmin(a, b), y, 0, 1},
      {"fmax(a,b)", fmax(a, b), x, 1, 0},
      {"fmax(b,0)", fmax(b, 0.0), 0, 0, 0},
  };
  for (const auto& c : cases) {
    EXPECT_NEAR(c.r.v, c.v, 1e-15 * std::max(1.0, std::abs(c.v))) << c.name;
    EXPECT_NEAR(c.r.d[0], c.dx, 1e-14 * std::max(1.0, std::abs(c.dx))) << c.name;
    EXPECT_NEAR(c.r.d[1], c.dy, 1e-14 * std::max(1.0, std::abs(c.dy))) << c.name;
    EXPECT_EQ(c.r.d[2], 0.0) << c.name;
  }
  // two-argument functions against central differences in each argument
  auto chk2 = [&](const char* name, auto fdual, auto fdbl) {
    const D r = fdual(a, b);
    expect_close(r.d[0], central([&](double t) { return fdbl(t, y); }, x), 1e-8, std::string(name) + " d/dx");
    expect_close(r.d[1], central([&](double t) { return fdbl(x, t); }, y), 1e-8, std::string(name) + " d/dy");
  };
  chk2("pow", [](const D& p, const D& q) { return pow(p, q); }, [](double p, double q) { return std::pow(p, q); });
  chk2("atan2", [](const D& p, const D& q) { return atan2(q, p); }, [](double p, double q) { return std::atan2(q, p); });
  chk2("hypot", [](const D& p, const D& q) { return hypot(p, q); }, [](double p, double q) { return std::hypot(p, q); });
  chk2("div", [](const D& p, const D& q) { return p / q; }, [](double p, double q) { return p / q; });
}

TEST(ForwardDual, CompoundAssignmentAndComparisons) {
  D a(2.0, 0), b(3.0, 1);
  D c = a;
  c += b;
  c -= 1.0;
  c *= b;
  c /= 2.0;
  c *= 4;
  c /= a;  // ((a + b - 1) * b / 2 * 4) / a
  const double v = ((2.0 + 3 - 1) * 3 / 2 * 4) / 2;
  EXPECT_DOUBLE_EQ(c.v, v);
  // d/da = [4b/2 * a - (a+b-1)*b*2] / a^2 = (6*2 - 4*3*2)/4 = -3 ; d/db = 2*(a+2b-1)/a = 2*7/2 = 7
  EXPECT_DOUBLE_EQ(c.d[0], -3.0);
  EXPECT_DOUBLE_EQ(c.d[1], 7.0);
  c += 1;
  c -= b;
  EXPECT_DOUBLE_EQ(c.v, v + 1 - 3);
  EXPECT_DOUBLE_EQ(c.d[1], 6.0);
  EXPECT_TRUE(a < b);
  EXPECT_TRUE(a <= 2.0);
  EXPECT_TRUE(2.0 >= a);
  EXPECT_TRUE(b > 2.5);
  EXPECT_TRUE(a == 2.0);
  EXPECT_TRUE(a != b);
  EXPECT_FALSE(a == D(2.0, 1) && a.d[1] == 1.0);  // comparison looks at the value only
  EXPECT_TRUE(a == D(2.0, 1));
  D z;
  EXPECT_EQ(z.v, 0.0);
  for (double p : z.d) EXPECT_EQ(p, 0.0);
  D s = 5;  // implicit constant
  EXPECT_EQ(s.v, 5.0);
  EXPECT_EQ(s.d[0], 0.0);
  EXPECT_EQ(value(s), 5.0);
}

TEST(ForwardDual, ValueEqualsDoubleEvaluationBitwise) {
  auto f = [](auto x, auto y) {
    using std::exp;
    using std::log;
    using std::pow;
    using std::sin;
    using std::sqrt;
    return (x / y + 1.0 / x) * sin(x * y) - sqrt(x * x + 3.0) / 7.0 + pow(x, 1.7) * exp(y / 3.0) + log(x / y);
  };
  for (double x : {0.3, 1.1, 2.9})
    for (double y : {0.7, 1.9}) EXPECT_EQ(f(D(x, 0), D(y, 1)).v, f(x, y));
}

TEST(ForwardDual, NestedDualsGiveSecondDerivatives) {
  using D2 = Dual<2>;
  using DD = Dual<2, D2>;
  const double x = 0.8, y = 1.7;
  DD X, Y;
  X.v = D2(x, 0);
  X.d[0] = D2(1.0);
  Y.v = D2(y, 1);
  Y.d[1] = D2(1.0);
  // f = x^2 y^3 + sin(x y) + exp(x) / y
  const DD r = X * X * pow(Y, 3) + sin(X * Y) + exp(X) / Y;
  const double s = std::sin(x * y), c = std::cos(x * y), e = std::exp(x);
  const double fx = 2 * x * y * y * y + y * c + e / y;
  const double fy = 3 * x * x * y * y + x * c - e / (y * y);
  const double fxx = 2 * y * y * y - y * y * s + e / y;
  const double fxy = 6 * x * y * y + c - x * y * s - e / (y * y);
  const double fyy = 6 * x * x * y - x * x * s + 2 * e / (y * y * y);
  EXPECT_NEAR(value(r), x * x * y * y * y + s + e / y, 1e-14);
  EXPECT_NEAR(r.v.d[0], fx, 1e-13);
  EXPECT_NEAR(r.v.d[1], fy, 1e-13);
  EXPECT_NEAR(r.d[0].v, fx, 1e-13);
  EXPECT_NEAR(r.d[1].v, fy, 1e-13);
  EXPECT_NEAR(r.d[0].d[0], fxx, 1e-12);
  EXPECT_NEAR(r.d[0].d[1], fxy, 1e-12);
  EXPECT_NEAR(r.d[1].d[0], fxy, 1e-12);
  EXPECT_NEAR(r.d[1].d[1], fyy, 1e-12);

  // Second derivatives of every unary function: nested d²/dx² vs central difference of
  // the first derivative computed with Dual<1>.
  using E = Dual<1, Dual<1>>;
  auto second = [](auto f, double x0) {
    E a;
    a.v = Dual<1>(x0, 0);
    a.d[0] = Dual<1>(1.0);
    return f(a).d[0].d[0];
  };
  auto first = [](auto f, double x0) { return f(Dual<1>(x0, 0)).d[0]; };
  auto check = [&](const char* name, auto f, double x0) {
    const double h = 1e-5;
    const double fd = (first(f, x0 + h) - first(f, x0 - h)) / (2 * h);
    EXPECT_NEAR(second(f, x0), fd, 1e-7 * std::max(1.0, std::abs(fd))) << name << " at " << x0;
  };
  check("sin", [](auto a) { return sin(a); }, 0.3);
  check("tan", [](auto a) { return tan(a); }, 0.3);
  check("asin", [](auto a) { return asin(a); }, 0.3);
  check("acos", [](auto a) { return acos(a); }, 0.3);
  check("atan", [](auto a) { return atan(a); }, 0.3);
  check("tanh", [](auto a) { return tanh(a); }, 0.3);
  check("sqrt", [](auto a) { return sqrt(a); }, 0.3);
  check("log", [](auto a) { return log(a); }, 0.3);
  check("exp", [](auto a) { return exp(a); }, 0.3);
  check("cbrt", [](auto a) { return cbrt(a); }, 0.3);
  check("erf", [](auto a) { return erf(a); }, 0.3);
  check("pow(a,2.5)", [](auto a) { return pow(a, 2.5); }, 0.3);
  check("pow(2,a)", [](auto a) { return pow(2.0, a); }, 0.3);
  check("pow(a,a)", [](auto a) { return pow(a, a); }, 0.3);
  check("atan2(a,2)", [](auto a) { return atan2(a, 2.0); }, 0.3);
  check("hypot(a,2)", [](auto a) { return hypot(a, 2.0); }, 0.3);
  check("1/a", [](auto a) { return 1.0 / a; }, 0.3);
}

TEST(ForwardDual, SinCosTogether) {
  const D a(0.7, 2);
  D s, c;
  sin_cos(a, s, c);
  const D s2 = sin(a), c2 = cos(a);
  EXPECT_EQ(s.v, s2.v);
  EXPECT_EQ(c.v, c2.v);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(s.d[k], s2.d[k]);
    EXPECT_EQ(c.d[k], c2.d[k]);
  }
  double sd, cd;
  stardiff::forward::sin_cos(0.7, sd, cd);
  EXPECT_EQ(sd, std::sin(0.7));
  EXPECT_EQ(cd, std::cos(0.7));
  // nested: second derivatives of sin and cos
  Dual<1, Dual<1>> x, sn, cs;
  x.v = Dual<1>(0.4, 0);
  x.d[0] = Dual<1>(1.0);
  sin_cos(x, sn, cs);
  EXPECT_NEAR(sn.d[0].d[0], -std::sin(0.4), 1e-15);
  EXPECT_NEAR(cs.d[0].d[0], -std::cos(0.4), 1e-15);
}

TEST(ForwardDual, LayoutIsPlainArray) {
  static_assert(sizeof(Dual<8>) == 9 * sizeof(double));
  static_assert(std::is_trivially_copyable_v<Dual<8>>);
  static_assert(is_dual_v<Dual<4, Dual<2>>> && !is_dual_v<double>);
  SUCCEED();
}
