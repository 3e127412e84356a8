// tests/unit/test_powerflow_support.hpp — helpers for the power-flow tests: paths of the
// built-in case (apps/pf/testdata/pf6.m) and the shared MATPOWER data, CSV/MTX readers, and
// an independent mismatch computation from a result (p.u.) used as a check.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "stardiff/powerflow.hpp"

namespace stardiff::powerflow::pftest {

inline std::string source_dir() {
  const char* d = std::getenv("STARDIFF_SOURCE_DIR");
  return d ? d : ".";
}
inline std::string pf6_path() { return source_dir() + "/apps/pf/testdata/pf6.m"; }
inline std::string matpower_dir() {
  const char* d = std::getenv("STARDIFF_SHARED_DATA");
  std::string dir = d ? std::string(d) + "/matpower" : source_dir() + "/../shared/data/matpower";
  return std::ifstream(dir + "/case9.m") ? dir : std::string();
}
inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct CsvRow {
  long long bus;
  double vm, va;
  int type = 0;
};
inline std::vector<CsvRow> read_solution(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header
  std::vector<CsvRow> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    CsvRow r;
    char c;
    std::istringstream ss(line);
    ss >> r.bus >> c >> r.vm >> c >> r.va;
    if (ss >> c) ss >> r.type;
    rows.push_back(r);
  }
  return rows;
}

// Dense-enough triplets of a Matrix Market coordinate file (1-based in the file, 0-based here).
struct Triplets {
  int nrows = 0, ncols = 0;
  std::vector<int> r, c;
  std::vector<double> v;
};
inline Triplets read_mtx(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  Triplets t;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '%') break;
  long nnz = 0;
  std::istringstream(line) >> t.nrows >> t.ncols >> nnz;
  for (long k = 0; k < nnz; ++k) {
    int i, j;
    double v;
    in >> i >> j >> v;
    t.r.push_back(i - 1);
    t.c.push_back(j - 1);
    t.v.push_back(v);
  }
  return t;
}

// max |F| of the power-balance mismatch at a result, recomputed from Vm/Va (degrees) with
// the result's final bus types and the case's injections (no Q-limit adjustments).
inline double recomputed_mismatch(const Case& c, const NewtonResult& r) {
  const Network net = make_network(c);
  const GenState g = initial_gen_state(c, net);
  const auto sbus = make_sbus(c, net, g);
  double mx = 0;
  for (int i = 0; i < net.n; ++i) {
    const int b = net.case_bus[i];
    if (r.bus_type[b] == REF) continue;
    std::complex<double> s = 0;
    for (std::int32_t e = net.row_ptr[i]; e < net.row_ptr[i + 1]; ++e) {
      const int j = net.col_idx[e];
      const int bj = net.case_bus[j];
      s += net.y_row[e] * std::polar(r.vm[bj], r.va_deg[bj] * M_PI / 180.0);
    }
    s = std::polar(r.vm[b], r.va_deg[b] * M_PI / 180.0) * std::conj(s) - sbus[i];
    mx = std::max(mx, std::fabs(s.real()));
    if (r.bus_type[b] == PQ) mx = std::max(mx, std::fabs(s.imag()));
  }
  return mx;
}

}  // namespace stardiff::powerflow::pftest
