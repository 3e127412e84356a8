// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/integration/test_powerflow_batch_driver.cpp — stardiff-pf --batch on the built-in
// pf6 case: one JSON object with one entry per scenario (a scenario with loads x10 reported
// as not converged, exit 1, the others converged); --batch-random + --batch-write writes a
// file that --batch reads back to the same results; bad scenario files (no header, a bad
// number, an unknown bus, a wrong column count, out of order, a bus twice, empty, missing)
// and bad batch options exit 2 naming FILE:LINE.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "support/driver_run.hpp"
#include "unit/test_powerflow_support.hpp"

using namespace stardiff::powerflow;

namespace {

std::string driver() { return stardiff::testing::driver_path("apps/pf/stardiff-pf"); }

using stardiff::testing::DriverRun;
DriverRun run(const std::string& args) {
  return stardiff::testing::run_driver(driver(), args, ::testing::TempDir() + "pf_batch_driver_stderr.txt");
}

std::string write(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

// The "scenarios" array's entries, as text.
std::vector<std::string> entries(const std::string& json) {
  std::vector<std::string> e;
  const auto at = json.find("\"scenarios\":[");
  if (at == std::string::npos) return e;
  for (std::size_t p = json.find('{', at); p != std::string::npos; p = json.find('{', p + 1))
    e.push_back(json.substr(p, json.find('}', p) - p + 1));
  return e;
}

}  // namespace

TEST(PowerflowBatchDriver, ScenariosJsonAndExitCodes) {
  if (!std::ifstream(driver())) GTEST_SKIP() << "stardiff-pf not built";
  // pf6 bus ids 10..60; bus 40 carries a load.
  const std::string f = write("pf6_batch.csv",
                              "# three scenarios\nscenario,bus,Pd,Qd\n0,*,0.9,0.9\n1,*,10,10\n"
                              "2,40,120,40\n2,*,1.05,1\n\n");
  DriverRun r = run(pftest::pf6_path() + " --batch " + f + " --json");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1);
  for (const char* key : {"\"batch\":3", "\"converged\":false", "\"failed\":1", "\"base_converged\":true",
                          "\"total_s\":", "\"per_scenario_s\":", "\"tasks\":"})
    EXPECT_NE(r.out.find(key), std::string::npos) << key << " in " << r.out;
  const std::vector<std::string> e = entries(r.out);
  ASSERT_EQ(e.size(), 3u) << r.out;
  EXPECT_NE(e[0].find("\"scenario\":0,\"converged\":true,\"status\":\"converged\""), std::string::npos) << e[0];
  EXPECT_NE(e[1].find("\"scenario\":1,\"converged\":false"), std::string::npos) << e[1];
  EXPECT_NE(e[2].find("\"scenario\":2,\"converged\":true"), std::string::npos) << e[2];
  EXPECT_NE(r.err.find("scenario 1: "), std::string::npos) << r.err;

  // Without the bad scenario: exit 0, and the others' entries unchanged (renumbered).
  const std::string g = write("pf6_batch_good.csv", "scenario,bus,Pd,Qd\n0,*,0.9,0.9\n1,40,120,40\n1,*,1.05,1\n");
  DriverRun ok = run(pftest::pf6_path() + " --batch " + g + " --json --executor sequential");
  EXPECT_EQ(ok.code, 0) << ok.err;
  const std::vector<std::string> e2 = entries(ok.out);
  ASSERT_EQ(e2.size(), 2u);
  EXPECT_EQ(e2[0], e[0]);
  EXPECT_EQ(e2[1].substr(e2[1].find(",\"converged\"")), e[2].substr(e[2].find(",\"converged\"")));
}

TEST(PowerflowBatchDriver, RandomScenariosWriteAndReadBack) {
  if (!std::ifstream(driver())) GTEST_SKIP() << "stardiff-pf not built";
  const std::string f = ::testing::TempDir() + "pf6_random.csv";
  DriverRun a = run(pftest::pf6_path() + " --batch-random 7 --batch-seed 5 --batch-scale 0.9,1.1 --batch-write " + f +
                    " --json");
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(pftest::read_text(f).rfind("scenario,bus,Pd,Qd\n0,*,", 0), 0u);
  DriverRun b = run(pftest::pf6_path() + " --batch " + f + " --json");
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_EQ(entries(a.out), entries(b.out));
  EXPECT_EQ(entries(a.out).size(), 7u);
  DriverRun c = run(pftest::pf6_path() + " --batch-random 7 --batch-seed 6 --json");
  EXPECT_NE(entries(a.out), entries(c.out));  // the seed matters
}

TEST(PowerflowBatchDriver, BadScenarioFilesExit2WithTheLine) {
  if (!std::ifstream(driver())) GTEST_SKIP() << "stardiff-pf not built";
  struct Bad {
    const char* text;
    const char* message;  // after "FILE:"
  };
  const Bad bad[] = {
      {"0,*,1,1\n", "1: expected the header 'scenario,bus,Pd,Qd'"},
      {"scenario,bus,Pd,Qd\n0,*,1,1\n0,40,1x0,3\n", "3: Pd is not a finite number: '1x0'"},
      {"scenario,bus,Pd,Qd\n0,40,10,nan\n", "2: Qd is not a finite number: 'nan'"},
      {"scenario,bus,Pd,Qd\n0,*,1,1\n1,99,10,3\n", "3: unknown bus 99 (not in the case)"},
      {"scenario,bus,Pd,Qd\n0,*,1,1\n\n0,40,10\n", "4: expected 4 columns (scenario,bus,Pd,Qd), got 3"},
      {"scenario,bus,Pd,Qd\n0,*,1,1\n2,*,1,1\n", "3: scenario 2 out of order (expected 0 or 1)"},
      {"scenario,bus,Pd,Qd\n0,40,1,1\n0,40,2,2\n", "3: bus 40 given twice in scenario 0"},
      {"scenario,bus,Pd,Qd\n-1,40,1,1\n", "2: scenario must be a non-negative integer, got '-1'"},
      {"scenario,bus,Pd,Qd\n0,4x,1,1\n", "2: bus must be a bus id or '*', got '4x'"},
      {"", "0: empty scenario file"},
      {"# only a comment\n\n", "2: empty scenario file"},
      {"scenario,bus,Pd,Qd\n", "1: no scenarios after the header"},
  };
  int k = 0;
  for (const Bad& b : bad) {
    const std::string f = write("pf6_bad_" + std::to_string(k++) + ".csv", b.text);
    DriverRun r = run(pftest::pf6_path() + " --batch " + f + " --json");
    EXPECT_EQ(r.code, 2) << b.text;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find(f + ":" + b.message), std::string::npos) << r.err;
  }
  DriverRun missing = run(pftest::pf6_path() + " --batch /nonexistent.csv");
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("cannot open scenario file '/nonexistent.csv'"), std::string::npos) << missing.err;
  const std::string good = write("pf6_ok.csv", "scenario,bus,Pd,Qd\n0,*,1,1\n");
  for (const char* opts : {" --batch-random 0", " --batch-random 3 --batch-scale 2,1", " --batch-scale 1",
                           " --batch-tasks 2", " --batch-random 3 --qlim", " --batch-random 3 --csv x.csv",
                           " --batch-random 3 --batch-tasks 0", " --batch-random 3 --blocks 2"})
    EXPECT_EQ(run(pftest::pf6_path() + opts).code, 2) << opts;
  EXPECT_EQ(run(pftest::pf6_path() + " --batch " + good + " --batch-random 3").code, 2);
}
