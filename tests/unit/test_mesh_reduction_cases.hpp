// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_mesh_reduction_cases.hpp — SUM/MIN/MAX reductions over 1-, 2- and 3-D
// blocks for a given tile count (shared by the unit and the StarPU reduction tests).
#pragma once
#include <array>
#include <cmath>

#include "stardiff/mesh.hpp"
#include "stardiff/runtime/executor.hpp"

namespace reduction_cases {
using namespace stardiff;
using namespace stardiff::mesh;

struct SumMinMax {
  void operator()(Acc<const double> u, double* s, double* lo, double* hi) const {
    *s += u(0) * u(0) + 0.1;
    *lo = u(0) < *lo ? u(0) : *lo;
    *hi = u(0) > *hi ? u(0) : *hi;
  }
};
struct Sum2 {
  void operator()(Acc<const double> u, const int* idx, double* s) const { *s += u(0, 0) / (1.0 + idx[0] + idx[1]); }
};
struct Sum3 {
  void operator()(Acc<const double> u, double* s) const { *s += u(0, 0, 0) * 1.000001; }
};

// {1-D sum, min, max, 2-D sum (interior), 2-D sum (halo included), 3-D sum}
inline std::array<double, 6> run(Executor& ex, int tiles) {
  std::array<double, 6> out{};
  {
    Block b(ex, "line", {57}, tiles);
    Dat<double> u(b, "u", Halo{1}, {.active = false});
    u.set([](int i, int, int) { return std::sin(0.37 * i) + 1e-3 * i; });
    Reduction<double> s(b, ReduceOp::SUM, "s"), lo(b, ReduceOp::MIN, "lo"), hi(b, ReduceOp::MAX, "hi");
    par_loop("smm", b, Range{-1, 58}, SumMinMax{}, arg_dat(u, READ), arg_reduce(s), arg_reduce(lo), arg_reduce(hi));
    out[0] = s.value();
    out[1] = lo.value();
    out[2] = hi.value();
  }
  {
    Block b(ex, "plane", {33, 29}, tiles);
    Dat<double> u(b, "u", Halo{1}, {.active = false});
    u.set([](int i, int j, int) { return std::sin(0.37 * i + 1.3 * j) * std::exp(0.01 * j); });
    Reduction<double> s(b, ReduceOp::SUM, "s"), h(b, ReduceOp::SUM, "h");
    par_loop("sum2", b, b.interior(), Sum2{}, arg_dat(u, READ), arg_idx(), arg_reduce(s));
    par_loop("sum2h", b, Range{0, 33, -1, 30}, Sum2{}, arg_dat(u, READ), arg_idx(), arg_reduce(h));
    out[3] = s.value();
    out[4] = h.value();
  }
  {
    Block b(ex, "box", {7, 6, 11}, tiles);
    Dat<double> u(b, "u", Halo{0}, {.active = false});
    u.set([](int i, int j, int k) { return std::cos(0.5 * i - j + 0.25 * k) / 3.0; });
    Reduction<double> s(b, ReduceOp::SUM, "s");
    par_loop("sum3", b, b.interior(), Sum3{}, arg_dat(u, READ), arg_reduce(s));
    out[5] = s.value();
  }
  return out;
}
}  // namespace reduction_cases
