// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/common/cli.hpp — option parsing and timing helpers the drivers share.
//
// parse_int(s, lo, hi, out): s is a whole base-10 integer in [lo, hi] (nothing trailing,
//   no overflow); false otherwise, out untouched.
// parse_pos_double(s, out): s is a whole finite number > 0; false otherwise.
// parse_index_pair(s, i, j): s is exactly "I,J" (two integers); false otherwise.
// seconds_since(t0): wall-clock seconds from t0 to now.
#pragma once
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace stardiff::apps {

inline bool parse_int(const char* s, long lo, long hi, int& out) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s, &end, 10);
  if (errno || end == s || *end != '\0' || v < lo || v > hi) return false;
  out = static_cast<int>(v);
  return true;
}

inline bool parse_pos_double(const char* s, double& out) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s, &end);
  if (errno || end == s || *end != '\0' || !(v > 0) || !std::isfinite(v)) return false;
  out = v;
  return true;
}

inline bool parse_index_pair(const char* s, int& i, int& j) {
  int used = 0;
  return std::sscanf(s, "%d,%d%n", &i, &j, &used) == 2 && s[used] == '\0';
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace stardiff::apps
