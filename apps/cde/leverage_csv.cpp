// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/cde/leverage_csv.cpp — the leverage CSV reader (contract in the header).
#include "leverage_csv.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "stardiff/runtime/error.hpp"

namespace stardiff::cde {
namespace {

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out(1);
  for (char ch : line) {
    if (ch == ',') out.emplace_back();
    else if (ch != '\r') out.back() += ch;
  }
  return out;
}

double number(const std::string& cell, const std::string& where) {
  std::size_t a = cell.find_first_not_of(" \t"), b = cell.find_last_not_of(" \t");
  const std::string t = a == std::string::npos ? std::string() : cell.substr(a, b - a + 1);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || errno || *end != '\0' || !std::isfinite(v))
    throw Error("leverage file " + where + ": '" + t + "' is not a finite number");
  return v;
}

}  // namespace

Leverage read_leverage_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("leverage file '" + path + "' cannot be opened");
  Leverage lev;
  std::string line;
  int lineno = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++lineno;
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const auto cells = split(line);
    const std::string where = "'" + path + "' line " + std::to_string(lineno);
    if (!header) {
      if (cells.size() < 2) throw Error("leverage file " + where + ": the header needs at least one spot node");
      for (std::size_t c = 1; c < cells.size(); ++c) lev.s.push_back(number(cells[c], where));
      header = true;
      continue;
    }
    if (cells.size() != lev.s.size() + 1)
      throw Error("leverage file " + where + ": " + std::to_string(cells.size() - 1) + " values for " +
                  std::to_string(lev.s.size()) + " spot nodes (missing or extra nodes)");
    lev.t.push_back(number(cells[0], where));
    for (std::size_t c = 1; c < cells.size(); ++c) lev.L.push_back(number(cells[c], where));
  }
  if (!header || lev.t.empty()) throw Error("leverage file '" + path + "': no header and time rows");
  return lev;
}

}  // namespace stardiff::cde
