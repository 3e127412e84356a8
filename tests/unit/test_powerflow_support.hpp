// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_powerflow_support.hpp — helpers for the power-flow tests: paths of the
// built-in case (apps/pf/testdata/pf6.m) and the shared MATPOWER data, CSV/MTX readers, and
// an independent mismatch computation from a result (p.u.) used as a check, and the
// mutation engine of the fuzz tests.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdlib>
#include <random>
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

// Fuzzing: random mutations of a case text; every outcome is a solve() result with a
// known status or a stardiff::Error whose message starts with `name`.
inline std::string mutate(const std::string& s, std::mt19937& rng) {
  std::uniform_int_distribution<std::size_t> pos(0, s.empty() ? 0 : s.size() - 1);
  std::string t = s;
  static const char* tokens[] = {"NaN", "Inf", "-Inf", "0", "-1", "1e308", "-0", "3.5", "abc", "1e-320",
                                 "4294967297", "[", "]", ";", "...", "%", "'", "{", "}", "\n", "", "2", "3", "4"};
  switch (rng() % 8) {
    case 0: {  // delete a character
      if (!t.empty()) t.erase(pos(rng), 1);
      break;
    }
    case 1: {  // insert a character
      static const char chars[] = "0123456789;[]%.'{}\n\t -eNa,=";
      t.insert(t.begin() + pos(rng), chars[rng() % (sizeof chars - 1)]);
      break;
    }
    case 2:
    case 3: {  // replace a numeric token by a special value
      std::size_t p = pos(rng);
      while (p < t.size() && !(std::isdigit(static_cast<unsigned char>(t[p])))) ++p;
      std::size_t e = p;
      while (e < t.size() && (std::isdigit(static_cast<unsigned char>(t[e])) || t[e] == '.' || t[e] == 'e' || t[e] == '-'))
        ++e;
      if (p < t.size()) t.replace(p, e - p, tokens[rng() % (sizeof tokens / sizeof *tokens)]);
      break;
    }
    case 4: {  // delete a line
      std::size_t p = t.rfind('\n', pos(rng));
      if (p != std::string::npos) {
        std::size_t e = t.find('\n', p + 1);
        t.erase(p, e == std::string::npos ? std::string::npos : e - p);
      }
      break;
    }
    case 5: {  // duplicate a line
      std::size_t p = t.rfind('\n', pos(rng));
      if (p != std::string::npos) {
        std::size_t e = t.find('\n', p + 1);
        t.insert(p, t.substr(p, e == std::string::npos ? std::string::npos : e - p));
      }
      break;
    }
    case 6:  // truncate
      t.resize(pos(rng));
      break;
    default: {  // change a status / type column: replace a single digit by another
      std::size_t p = pos(rng);
      while (p < t.size() && !std::isdigit(static_cast<unsigned char>(t[p]))) ++p;
      if (p < t.size()) t[p] = "01234"[rng() % 5];
    }
  }
  return t;
}

inline void fuzz(const std::string& name, const std::string& text, int iterations, unsigned seed) {
  std::mt19937 rng(seed);
  int parsed = 0, converged = 0, errors = 0;
  for (int it = 0; it < iterations; ++it) {
    std::string t = text;
    const int nmut = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < nmut; ++k) t = mutate(t, rng);
    try {
      const Case c = parse_matpower(t, name);
      ++parsed;
      SolveOptions o;
      o.q_limits = rng() % 2 == 0;
      o.max_iter = 10;
      o.jacobian = rng() % 4 == 0 ? JacobianMethod::Analytic : JacobianMethod::AD;
      const NewtonResult r = solve(c, o);
      converged += r.converged;
      ASSERT_EQ(r.vm.size(), c.buses.size());
      if (!r.converged)
        ASSERT_TRUE(r.status == NewtonStatus::MaxIter || r.status == NewtonStatus::Diverged ||
                    r.status == NewtonStatus::Singular || r.status == NewtonStatus::Infeasible)
            << to_string(r.status);
    } catch (const Error& e) {
      ++errors;
      ASSERT_EQ(std::string(e.what()).rfind(name, 0), 0u) << e.what();
    }
  }
  std::printf("%-14s mutations=%d parsed=%d converged=%d errors=%d\n", name.c_str(), iterations, parsed, converged,
              errors);
  EXPECT_GT(parsed, 0);
  EXPECT_GT(errors, 0);
}

}  // namespace stardiff::powerflow::pftest
