// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/support/driver_run.hpp — runs a built driver from a test and reads its JSON:
// driver_path("apps/poisson/stardiff-poisson") is that path under $STARDIFF_BINARY_DIR
// (or .); run_command(cmd, &rc) runs cmd through the shell with stderr discarded and returns
// its stdout (rc: the exit status); json_field(text, key, n) is the number after the n-th
// "key": in text (NaN when absent); run_driver(path, args, err_file) runs `path args`
// through the shell with stderr to err_file and returns the exit status (-1 when it did
// not exit), stdout and stderr (a failing popen is a test failure).
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace stardiff::testing {

inline std::string driver_path(const std::string& relative) {
  const char* b = std::getenv("STARDIFF_BINARY_DIR");
  return std::string(b ? b : ".") + "/" + relative;
}

inline std::string run_command(const std::string& cmd, int* rc = nullptr) {
  FILE* p = popen((cmd + " 2>/dev/null").c_str(), "r");
  if (!p) return {};
  std::string out;
  std::array<char, 4096> buf;
  while (std::fgets(buf.data(), buf.size(), p)) out += buf.data();
  const int st = pclose(p);
  if (rc) *rc = WEXITSTATUS(st);
  return out;
}

inline double json_field(const std::string& json, const std::string& key, int n = 0) {
  std::size_t pos = 0;
  for (int k = 0; k <= n; ++k) {
    pos = json.find("\"" + key + "\":", pos);
    if (pos == std::string::npos) return std::nan("");
    pos += key.size() + 3;
  }
  return std::strtod(json.c_str() + pos, nullptr);
}

struct DriverRun {
  int code = -1;
  std::string out, err;
};
inline DriverRun run_driver(const std::string& path, const std::string& args, const std::string& err_file) {
  const std::string cmd = path + " " + args + " 2>" + err_file;
  DriverRun r;
  FILE* p = popen(cmd.c_str(), "r");
  EXPECT_NE(p, nullptr) << cmd;
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream in(err_file, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  return r;
}

}  // namespace stardiff::testing
