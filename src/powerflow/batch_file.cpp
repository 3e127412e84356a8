// SPDX-License-Identifier: LGPL-2.1-or-later
// src/powerflow/batch_file.cpp — the scenario CSV (read_scenarios, write_scenarios) and the
// random scale-only scenarios (see stardiff/powerflow/batch.hpp).
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "stardiff/powerflow/batch.hpp"
#include "stardiff/runtime/error.hpp"

namespace stardiff::powerflow {
namespace {

std::string trim(const std::string& s) {
  std::size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r')) ++a;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r')) --b;
  return s.substr(a, b - a);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> f;
  std::size_t p = 0;
  for (;;) {
    std::size_t q = s.find(',', p);
    f.push_back(trim(s.substr(p, q == std::string::npos ? std::string::npos : q - p)));
    if (q == std::string::npos) return f;
    p = q + 1;
  }
}

}  // namespace

std::vector<Scenario> read_scenarios(const std::string& path, const Case& c) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open scenario file '" + path + "'");
  auto fail = [&](int line, const std::string& msg) -> Error {
    return Error(path + ":" + std::to_string(line) + ": " + msg);
  };
  std::unordered_map<long long, int> bus_of;
  for (std::size_t b = 0; b < c.buses.size(); ++b) bus_of[c.buses[b].id] = static_cast<int>(b);

  std::vector<Scenario> out;
  std::unordered_set<int> seen;  // buses of the current scenario
  bool header = false, scaled = false;
  std::string raw;
  int line = 0;
  while (std::getline(in, raw)) {
    ++line;
    const std::string s = trim(raw);
    if (s.empty() || s[0] == '#') continue;
    const std::vector<std::string> f = split(s);
    if (!header) {
      if (f.size() != 4 || f[0] != "scenario" || f[1] != "bus" || f[2] != "Pd" || f[3] != "Qd")
        throw fail(line, "expected the header 'scenario,bus,Pd,Qd', got '" + s + "'");
      header = true;
      continue;
    }
    if (f.size() != 4) throw fail(line, "expected 4 columns (scenario,bus,Pd,Qd), got " + std::to_string(f.size()));
    char* end = nullptr;
    errno = 0;
    const long long id = std::strtoll(f[0].c_str(), &end, 10);
    if (f[0].empty() || *end != '\0' || errno != 0 || id < 0)
      throw fail(line, "scenario must be a non-negative integer, got '" + f[0] + "'");
    const long long next = static_cast<long long>(out.size());
    if (id == next) {
      out.emplace_back();
      seen.clear();
      scaled = false;
    } else if (id != next - 1) {
      throw fail(line, "scenario " + f[0] + " out of order (expected " +
                           (next > 0 ? std::to_string(next - 1) + " or " : std::string()) + std::to_string(next) + ")");
    }
    double v[2];
    for (int k = 0; k < 2; ++k) {
      const std::string& t = f[2 + k];
      end = nullptr;
      v[k] = std::strtod(t.c_str(), &end);
      if (t.empty() || *end != '\0' || !std::isfinite(v[k]))
        throw fail(line, std::string(k == 0 ? "Pd" : "Qd") + " is not a finite number: '" + t + "'");
    }
    Scenario& sc = out.back();
    if (f[1] == "*") {
      if (scaled) throw fail(line, "a second '*' (scale) row for scenario " + f[0]);
      scaled = true;
      sc.p_scale = v[0];
      sc.q_scale = v[1];
      continue;
    }
    errno = 0;
    const long long bid = std::strtoll(f[1].c_str(), &end, 10);
    if (f[1].empty() || *end != '\0' || errno != 0) throw fail(line, "bus must be a bus id or '*', got '" + f[1] + "'");
    auto it = bus_of.find(bid);
    if (it == bus_of.end()) throw fail(line, "unknown bus " + f[1] + " (not in the case)");
    if (!seen.insert(it->second).second) throw fail(line, "bus " + f[1] + " given twice in scenario " + f[0]);
    sc.loads.push_back({it->second, v[0], v[1]});
  }
  if (!header) throw fail(line, "empty scenario file (no 'scenario,bus,Pd,Qd' header)");
  if (out.empty()) throw fail(line, "no scenarios after the header");
  return out;
}

std::vector<Scenario> random_scenarios(int k, std::uint64_t seed, double lo, double hi) {
  require(k >= 0, "random_scenarios: k must be >= 0");
  require(std::isfinite(lo) && std::isfinite(hi) && lo <= hi, "random_scenarios: need finite lo <= hi");
  std::mt19937_64 gen(seed);
  std::vector<Scenario> out(k);
  for (Scenario& s : out) {
    const double u = static_cast<double>(gen() >> 11) * 0x1.0p-53;  // [0, 1), platform independent
    s.p_scale = s.q_scale = lo + (hi - lo) * u;
  }
  return out;
}

void write_scenarios(const std::string& path, const Case& c, const std::vector<Scenario>& sc) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw Error("cannot write scenario file '" + path + "'");
  std::fprintf(f, "scenario,bus,Pd,Qd\n");
  for (std::size_t s = 0; s < sc.size(); ++s) {
    if (sc[s].p_scale != 1 || sc[s].q_scale != 1 || sc[s].loads.empty())
      std::fprintf(f, "%zu,*,%.17g,%.17g\n", s, sc[s].p_scale, sc[s].q_scale);
    for (const Scenario::Load& l : sc[s].loads)
      std::fprintf(f, "%zu,%lld,%.17g,%.17g\n", s, static_cast<long long>(c.buses[l.bus].id), l.pd, l.qd);
  }
  if (std::fclose(f) != 0) throw Error("error writing scenario file '" + path + "'");
}

}  // namespace stardiff::powerflow
