// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/integration/test_powerflow_driver.cpp — stardiff-pf on the built-in pf6 case: exit
// codes (0 converged, 1 not converged with JSON still printed, 2 bad input/usage with the
// message naming FILE:LINE), --json prints exactly one JSON object with the documented keys,
// --csv writes `bus,Vm,Va_deg` rows with integer ids and %.17g values in case-file order,
// StarPU and sequential executors print identical CSVs. Bad input on stderr: a directory
// says "Is a directory", quotes of input are cut to 40 bytes, non-printable bytes escaped.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>

#include <cstdio>
#include <fstream>
#include <regex>

#include "support/driver_run.hpp"
#include "unit/test_powerflow_support.hpp"

using namespace stardiff::powerflow;

namespace {

std::string driver() { return stardiff::testing::driver_path("apps/pf/stardiff-pf"); }

using stardiff::testing::DriverRun;
DriverRun run(const std::string& args) {
  return stardiff::testing::run_driver(driver(), args, ::testing::TempDir() + "pf_driver_stderr.txt");
}

}  // namespace

TEST(PowerflowDriver, JsonAndCsv) {
  if (!std::ifstream(driver())) GTEST_SKIP() << "stardiff-pf not built";
  const std::string csv = ::testing::TempDir() + "pf6_out.csv";
  DriverRun r = run(pftest::pf6_path() + " --json --csv " + csv);
  ASSERT_EQ(r.code, 0) << r.err;
  // exactly one JSON object, one line
  EXPECT_EQ(r.out.front(), '{');
  EXPECT_EQ(r.out.substr(r.out.size() - 2), "}\n");
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1);
  for (const char* key : {"\"case\":\"pf6\"", "\"buses\":6", "\"branches\":7", "\"converged\":true", "\"iterations\":3",
                          "\"max_mismatch\":", "\"colors\":7", "\"color_lower_bound\":7", "\"jacobian_s\":",
                          "\"linsolve_s\":", "\"total_s\":"})
    EXPECT_NE(r.out.find(key), std::string::npos) << key << " in " << r.out;
  EXPECT_NE(r.err.find("iter  3"), std::string::npos) << r.err;  // human progress on stderr
  const std::string text = pftest::read_text(csv);
  EXPECT_EQ(text.rfind("bus,Vm,Va_deg\n", 0), 0u);
  const std::regex row("^(10|20|35|40|57|60),-?[0-9.e+-]+,-?[0-9.e+-]+$");
  std::istringstream ss(text);
  std::string line;
  std::getline(ss, line);
  int rows = 0;
  const char* ids[] = {"10,", "20,", "35,", "40,", "57,", "60,"};
  while (std::getline(ss, line)) {
    EXPECT_TRUE(std::regex_match(line, row)) << line;
    EXPECT_EQ(line.rfind(ids[rows], 0), 0u) << line;  // case-file order
    ++rows;
  }
  EXPECT_EQ(rows, 6);
  EXPECT_NE(text.find("\n10,1.02,0\n"), std::string::npos);  // reference bus: file values
  // %.17g: the PV bus magnitude 1.01 prints as 1.01 (exact) or with 17 significant digits
  const auto sol = pftest::read_solution(csv);
  EXPECT_NEAR(sol[1].vm, 1.01, 1e-15);
  // sequential executor: same CSV bytes
  const std::string csv2 = ::testing::TempDir() + "pf6_out_seq.csv";
  DriverRun s = run(pftest::pf6_path() + " --executor sequential --csv " + csv2);
  ASSERT_EQ(s.code, 0);
  EXPECT_EQ(pftest::read_text(csv2), text);
  // human output without --json goes to stdout, one line per iteration
  EXPECT_NE(s.out.find("solve 0 iter  0"), std::string::npos);
}

TEST(PowerflowDriver, ExitCodes) {
  if (!std::ifstream(driver())) GTEST_SKIP() << "stardiff-pf not built";
  DriverRun r = run(pftest::pf6_path() + " --json --max-iter 1");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("\"converged\":false"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"status\":\"max_iter\""), std::string::npos) << r.out;
  r = run(pftest::pf6_path() + " --qlim --json");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("\"iterations\":6"), std::string::npos) << r.out;
  EXPECT_EQ(run("").code, 2);
  EXPECT_EQ(run(pftest::pf6_path() + " --order bogus").code, 2);
  EXPECT_EQ(run(pftest::pf6_path() + " --tol -1").code, 2);
  EXPECT_EQ(run(pftest::pf6_path() + " --max-iter x").code, 2);
  EXPECT_EQ(run("/nonexistent.m").code, 2);
  // a malformed file: exit 2, message with file:line
  const std::string bad = ::testing::TempDir() + "bad_case.m";
  {
    std::string t = pftest::read_text(pftest::pf6_path());
    t.replace(t.find("	40	1	100	35"), 13, "	40	1	1x0	35");
    std::ofstream(bad) << t;
  }
  r = run(bad + " --json");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find(bad + ":19: non-numeric field '1x0'"), std::string::npos) << r.err;
}

TEST(PowerflowDriver, BadInputIsQuotedSafely) {
  if (!std::ifstream(driver())) GTEST_SKIP() << "stardiff-pf not built";
  DriverRun r = run(::testing::TempDir() + " --json");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("Is a directory"), std::string::npos) << r.err;
  const std::string gz = ::testing::TempDir() + "pf_case.m.gz";
  std::ofstream(gz, std::ios::binary) << std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10);
  r = run(gz);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(gz + ":1: unexpected character '\\x1f' at top level"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x1f'), std::string::npos);
  const std::string big = ::testing::TempDir() + "pf_big_line.m";
  {
    std::string t = pftest::read_text(pftest::pf6_path());
    t.replace(t.find("	40	1	100	35"), 13, "	40	1	1" + std::string(5 << 20, '0') + "x	35");
    std::ofstream(big) << t;
  }
  r = run(big);
  EXPECT_EQ(r.code, 2);
  EXPECT_LT(r.err.size(), 400u);
  EXPECT_NE(r.err.find(big + ":19: non-numeric field '1" + std::string(39, '0') + "...'"), std::string::npos)
      << r.err.substr(0, 400);
}
