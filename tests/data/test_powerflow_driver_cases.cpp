// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/data/test_powerflow_driver_cases.cpp — stardiff-pf on shared MATPOWER cases: the CSV
// of case9241pegase (AD Jacobians, StarPU) and of case14 with --qlim match MATPOWER's
// solutions (|dVm| <= 1e-6, |dVa| <= 1e-5 deg), JSON reports 84 colours (best) and 85 with
// --order natural. Skips when the data or the driver are absent.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>

#include "unit/test_powerflow_support.hpp"

using namespace stardiff::powerflow;

namespace {
std::string driver() {
  const char* b = std::getenv("STARDIFF_BINARY_DIR");
  return std::string(b ? b : ".") + "/apps/pf/stardiff-pf";
}
std::string capture(const std::string& args, int& code) {
  FILE* p = popen((driver() + " " + args + " 2>/dev/null").c_str(), "r");
  std::string out;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int st = pclose(p);
  code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}
void compare(const std::string& got, const std::string& ref) {
  const auto a = pftest::read_solution(got), b = pftest::read_solution(ref);
  ASSERT_EQ(a.size(), b.size());
  double dvm = 0, dva = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a[k].bus, b[k].bus);
    dvm = std::max(dvm, std::fabs(a[k].vm - b[k].vm));
    dva = std::max(dva, std::fabs(a[k].va - b[k].va));
  }
  EXPECT_LE(dvm, 1e-6) << got;
  EXPECT_LE(dva, 1e-5) << got;
}
}  // namespace

TEST(PowerflowDriverCases, Pegase9241AndQlim) {
  const std::string dir = pftest::matpower_dir();
  if (dir.empty()) GTEST_SKIP() << "no ../shared/data/matpower";
  if (!std::ifstream(driver())) GTEST_SKIP() << "stardiff-pf not built";
  const std::string csv = ::testing::TempDir() + "pf9241.csv";
  int code = -1;
  std::string out = capture(dir + "/case9241pegase.m --json --csv " + csv, code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("\"colors\":84,\"color_lower_bound\":84"), std::string::npos) << out;
  compare(csv, dir + "/solutions/case9241pegase.pf.csv");
  out = capture(dir + "/case9241pegase.m --json --order natural --executor sequential", code);
  EXPECT_EQ(code, 0);
  EXPECT_NE(out.find("\"colors\":85,"), std::string::npos) << out;
  const std::string q = ::testing::TempDir() + "pf14q.csv";
  capture(dir + "/case14.m --qlim --csv " + q, code);
  ASSERT_EQ(code, 0);
  compare(q, dir + "/solutions_qlim/case14.pf_qlim.csv");
}
