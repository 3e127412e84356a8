// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_powerflow_matpower.cpp — the MATPOWER reader: the built-in pf6 case
// (arbitrary ids, continuation, two rows on a line, cell array with quotes, out-of-service
// rows dropped) and every class of malformed input, each a stardiff::Error naming FILE:LINE;
// input quoted in a message is cut to 40 bytes with non-printable bytes as \xHH, and a
// directory is "Is a directory".
#include <gtest/gtest.h>

#include <regex>

#include "stardiff/powerflow.hpp"
#include "unit/test_powerflow_support.hpp"

using namespace stardiff;
using namespace stardiff::powerflow;

namespace {

const char* kMini = R"(function mpc = mini
mpc.version = '2';
mpc.baseMVA = 100;
mpc.bus = [
	1	3	0	0	0	0	1	1	0	345	1	1.1	0.9;
	2	1	50	10	0	0	1	1	0	345	1	1.1	0.9;
	3	2	20	5	0	0	1	1	0	345	1	1.1	0.9;
];
mpc.gen = [
	1	0	0	300	-300	1	100	1	250	10;
	3	40	0	300	-300	1.01	100	1	250	10;
];
mpc.branch = [
	1	2	0.01	0.1	0.02	250	250	250	0	0	1;
	2	3	0.01	0.1	0.02	250	250	250	0	0	1;
];
)";

// Replaces the first occurrence of `from` in kMini with `to`.
std::string mini_with(const std::string& from, const std::string& to) {
  std::string s = kMini;
  auto p = s.find(from);
  EXPECT_NE(p, std::string::npos) << from;
  return s.replace(p, from.size(), to);
}

// Expects parse_matpower(text) to throw an Error whose message starts with "bad.m:LINE:" and
// contains `what`.
void expect_error(const std::string& text, int line, const std::string& what) {
  try {
    parse_matpower(text, "bad.m");
    ADD_FAILURE() << "no error for: " << what;
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("bad.m:" + std::to_string(line) + ":", 0), 0u) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

}  // namespace

TEST(PowerflowMatpower, ReadsBuiltInCase) {
  const Case c = read_matpower(pftest::pf6_path());
  EXPECT_EQ(c.name, "pf6");
  EXPECT_DOUBLE_EQ(c.base_mva, 100.0);
  ASSERT_EQ(c.buses.size(), 6u);
  const long long ids[] = {10, 20, 35, 40, 57, 60};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(c.buses[i].id, ids[i]);
  EXPECT_EQ(c.buses[4].line, c.buses[3].line);  // two rows on one line
  EXPECT_EQ(c.ref, 0);
  EXPECT_DOUBLE_EQ(c.buses[2].bs, 19.0);
  EXPECT_DOUBLE_EQ(c.buses[3].gs, 5.0);
  EXPECT_EQ(c.gen_rows, 6u);
  EXPECT_EQ(c.gens.size(), 5u);  // one out of service
  EXPECT_EQ(c.gens_dropped, 1u);
  EXPECT_EQ(c.branch_rows, 8u);
  EXPECT_EQ(c.branches.size(), 7u);
  EXPECT_EQ(c.branches_dropped, 1u);
  EXPECT_EQ(c.gencost_rows, 6u);
  // the continued row: 35 - 57 with r = 0.032 and x = 0.161 from the next line
  const Branch& b = c.branches[6];
  EXPECT_EQ(c.buses[b.from].id, 35);
  EXPECT_EQ(c.buses[b.to].id, 57);
  EXPECT_DOUBLE_EQ(b.r, 0.032);
  EXPECT_DOUBLE_EQ(b.x, 0.161);
  EXPECT_DOUBLE_EQ(b.b, 0.306);
  EXPECT_DOUBLE_EQ(c.branches[4].ratio, 1.02);
  EXPECT_DOUBLE_EQ(c.branches[4].angle, 3.0);
}

TEST(PowerflowMatpower, AcceptsVariants) {
  // commas, Inf limits, semicolons on their own, CRLF line ends, unknown fields skipped
  std::string s = mini_with("	1	0	0	300	-300	1	100	1	250	10;", "	1, 0, 0, Inf, -Inf, 1, 100, 1, 250, 10");
  s = std::regex_replace(s, std::regex("\n"), "\r\n");
  s += "mpc.areas = [1 2; 3 4];\nmpc.note = 'x ] } ;';\nmpc.gentype = {'a'; 'b'};\n";
  const Case c = parse_matpower(s, "ok.m");
  EXPECT_EQ(c.buses.size(), 3u);
  EXPECT_TRUE(std::isinf(c.gens[0].qmax));
  EXPECT_EQ(c.gens.size(), 2u);
}

TEST(PowerflowMatpower, MalformedInput) {
  // line numbers: bus header 4, rows 5-7; gen header 9, rows 10-11; branch header 13, rows 14-15
  expect_error(mini_with("mpc.version = '2';", "mpc.version = '1';"), 2, "unsupported mpc.version");
  expect_error(mini_with("mpc.version = '2';", ""), 1, "missing mpc.version");
  expect_error(mini_with("mpc.baseMVA = 100;", "mpc.baseMVA = 0;"), 3, "baseMVA");
  expect_error(mini_with("mpc.baseMVA = 100;", "mpc.baseMVA = abc;"), 3, "non-numeric");
  expect_error(mini_with("mpc.gen = [", "mpc.gen_x = ["), 1, "missing section mpc.gen");
  expect_error(mini_with("	2	1	50	10	0	0	1	1	0	345	1	1.1	0.9;", "	2	1	50	10	0	0	1	1	0	345	1	1.1;"), 6,
               "columns");
  expect_error(mini_with("	1	2	0.01	0.1	0.02	250	250	250	0	0	1;", "	1	2	0.01	0.1	0.02	250	250	250;"), 14,
               "columns");
  expect_error(mini_with("	3	40	0	300", "	3	4x0	0	300"), 11, "non-numeric field '4x0'");
  expect_error(mini_with("	2	1	50	10", "	2	1	NaN	10"), 6, "NaN");
  expect_error(mini_with("	2	3	0.01	0.1", "	2	3	NaN	0.1"), 15, "NaN");
  expect_error(mini_with("	2	1	50	10", "	2	3	50	10"), 6, "second reference bus");
  expect_error(mini_with("	1	3	0	0", "	1	2	0	0"), 4, "no reference bus");
  expect_error(mini_with("	2	3	0.01	0.1	0.02	250	250	250	0	0	1;", "	2	3	0.01	0.1	0.02	250	250	250	0	0	0;"), 7,
               "not connected to the reference bus");
  expect_error(mini_with("	1	2	0.01	0.1", "	1	2	0	0"), 14, "zero impedance");
  expect_error(mini_with("	3	40	0	300", "	9	40	0	300"), 11, "not a bus");
  expect_error(mini_with("	3	2	20	5", "	2	2	20	5"), 7, "duplicate bus number 2");
  expect_error(mini_with("	3	2	20	5", "	3	7	20	5"), 7, "bus type");
  expect_error(mini_with("	3	2	20	5", "	3.5	2	20	5"), 7, "positive integer");
  expect_error(std::string(kMini).substr(0, std::string(kMini).size() - 3), 13, "unterminated matrix");
  expect_error(mini_with("mpc.baseMVA = 100;", "mpc.baseMVA = 100;\nx = 3;"), 4, "unsupported statement");
  expect_error(mini_with("	2	1	50	10	0	0	1	1	0	345	1	1.1	0.9;", "	2	1	50	10	0	0	1	Inf	0	345	1	1.1	0.9;"), 6,
               "VM must be finite");
}

TEST(PowerflowMatpower, MissingFile) {
  try {
    read_matpower("/nonexistent/case.m");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/case.m"), std::string::npos);
  }
}

namespace {

// Every byte of `msg` is printable ASCII.
bool printable_ascii(const std::string& msg) {
  for (char ch : msg)
    if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7f) return false;
  return true;
}

std::string error_of(const std::string& text) {
  try {
    parse_matpower(text, "bad.m");
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

}  // namespace

TEST(PowerflowMatpower, QuotedInputIsCutAndEscaped) {
  // a gzip file: the magic bytes are escaped, not printed raw
  std::string msg = error_of(std::string("\x1f\x8b\x08\x00\x12\x34\x56\x78\x00\x03", 10));
  EXPECT_EQ(msg, "bad.m:1: unexpected character '\\x1f' at top level");
  // a 5 MB token: 40 bytes quoted, then "..."
  const std::string big(5 << 20, '4');
  msg = error_of(mini_with("	3	40	0	300", "	3	" + big + "x0	0	300"));
  EXPECT_EQ(msg.rfind("bad.m:11: non-numeric field '" + big.substr(0, 40) + "...' in mpc.gen row 2 column 2", 0), 0u)
      << msg.substr(0, 200);
  EXPECT_LT(msg.size(), 200u);
  msg = error_of(mini_with("mpc.baseMVA = 100;", "mpc.baseMVA = " + big + "x;"));
  EXPECT_LT(msg.size(), 200u);
  EXPECT_NE(msg.find("non-numeric field '" + big.substr(0, 40) + "...'"), std::string::npos) << msg;
  msg = error_of(mini_with("mpc.baseMVA = 100;", "mpc.baseMVA = 100;\n" + std::string(1 << 20, 'x') + " = 3;"));
  EXPECT_LT(msg.size(), 200u);
  EXPECT_NE(msg.find("unsupported statement '" + std::string(40, 'x') + "...'"), std::string::npos) << msg;
  msg = error_of(mini_with("mpc.version = '2';", "mpc.version = '2\x01\xff" + std::string(100, 'v') + "';"));
  EXPECT_TRUE(printable_ascii(msg)) << msg;
  EXPECT_NE(msg.find("unsupported mpc.version '2\\x01\\xff" + std::string(37, 'v') + "...'"), std::string::npos) << msg;
  msg = error_of(mini_with("mpc.baseMVA = 100;", "mpc.baseMVA = 1\t0\x7f;"));
  EXPECT_NE(msg.find("non-numeric field '1\\x090\\x7f'"), std::string::npos) << msg;
  // exactly 40 bytes: no "..."
  msg = error_of(mini_with("mpc.baseMVA = 100;", "mpc.baseMVA = " + std::string(39, '1') + "z;"));
  EXPECT_NE(msg.find("'" + std::string(39, '1') + "z' in"), std::string::npos) << msg;
}

TEST(PowerflowMatpower, DirectoryIsAnError) {
  const std::string dir = ::testing::TempDir();
  try {
    read_matpower(dir);
    FAIL() << "a directory was read as a case";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("Is a directory"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("mpc.version"), std::string::npos) << msg;
  }
}

TEST(PowerflowMatpower, IsolatedBusesTakeNoPart) {
  // bus 2 isolated (type 4): branch 1-2 is dropped; bus 3 hangs on a branch 1-3 instead of 2-3
  std::string t = mini_with("	2	1	50	10", "	2	4	50	10");
  t.replace(t.find("	2	3	0.01"), 9, "	1	3	0.01");
  const Case c = parse_matpower(t, "iso.m");
  EXPECT_EQ(c.branches.size(), 1u);
  EXPECT_EQ(c.branches_dropped, 1u);
  const Network net = make_network(c);
  EXPECT_EQ(net.n, 2);
  const auto r = solve(c);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.bus_type[1], ISOLATED);
  EXPECT_DOUBLE_EQ(r.vm[1], 1.0);
  EXPECT_EQ(r.bus_type[2], PV);
}
