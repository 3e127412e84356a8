// tests/data/test_powerflow_fuzz.cpp — fuzz-style robustness: random mutations of real
// MATPOWER case files (characters, numbers, lines, truncation) and of the built-in pf6 case.
// Every outcome must be a parsed case whose solve() returns (converged or a numerical
// status, with or without Q limits) or a stardiff::Error whose message names the file —
// never a crash, a hang or another exception type. Skips the shared cases if absent.
#include <gtest/gtest.h>

#include <random>
#include <regex>

#include "stardiff/powerflow.hpp"
#include "unit/test_powerflow_support.hpp"

using namespace stardiff;
using namespace stardiff::powerflow;

namespace {

std::string mutate(const std::string& s, std::mt19937& rng) {
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

void fuzz(const std::string& name, const std::string& text, int iterations, unsigned seed) {
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
        ASSERT_TRUE(r.status == "max_iter" || r.status == "diverged" || r.status == "singular" ||
                    r.status == "infeasible")
            << r.status;
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

}  // namespace

TEST(PowerflowFuzz, BuiltInCase) { fuzz("pf6.m", pftest::read_text(pftest::pf6_path()), 600, 1); }

TEST(PowerflowFuzz, RealCaseFiles) {
  const std::string dir = pftest::matpower_dir();
  if (dir.empty()) GTEST_SKIP() << "no ../shared/data/matpower";
  unsigned seed = 10;
  for (const char* name : {"case9", "case14", "case30", "case57", "case118"})
    fuzz(std::string(name) + ".m", pftest::read_text(dir + "/" + name + ".m"), 300, seed++);
}
