// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_sparse_reader_support.hpp — helpers for the Matrix Market reader tests:
// in-memory gzip, CSC invariant checks, and the mutation engine of the fuzz tests.
//
// Contract: gzip() returns a valid single-member gzip stream of its input;
// expect_valid_lower_csc() asserts every invariant read_matrix_market promises
// (sorted unique rows, lower triangle, diagonal present, finite values); fuzz_reader()
// feeds `iterations` random mutations of `text` (and of its gzip form) to the istream
// reader and asserts that each outcome is a valid matrix or a stardiff::Error whose
// message names the input ("name:" prefix) — anything else fails the test.
#pragma once
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "stardiff/runtime/error.hpp"
#include "stardiff/sparse/matrix_market.hpp"

namespace stardiff::sparse::testing {

inline std::string gzip(const std::string& text) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, text.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

inline void expect_valid_lower_csc(const CscMatrix32& A) {
  ASSERT_TRUE(A.symmetric_lower);
  ASSERT_EQ(A.n_rows, A.n_cols);
  ASSERT_GT(A.n_cols, 0);
  ASSERT_EQ(A.col_ptr.size(), std::size_t(A.n_cols) + 1);
  ASSERT_EQ(A.col_ptr[0], 0);
  ASSERT_EQ(A.row_idx.size(), std::size_t(A.nnz()));
  ASSERT_EQ(A.values.size(), std::size_t(A.nnz()));
  for (std::int32_t j = 0; j < A.n_cols; ++j) {
    ASSERT_LT(A.col_ptr[j], A.col_ptr[j + 1]) << "column " << j << " lacks its diagonal";
    ASSERT_EQ(A.row_idx[A.col_ptr[j]], j) << "diagonal of column " << j << " is not first";
    for (std::int32_t p = A.col_ptr[j]; p < A.col_ptr[j + 1]; ++p) {
      ASSERT_LT(A.row_idx[p], A.n_rows);
      if (p > A.col_ptr[j]) {
        ASSERT_GT(A.row_idx[p], A.row_idx[p - 1]) << "column " << j;
      }
      ASSERT_TRUE(std::isfinite(A.values[p]));
    }
  }
}

// Outcome counts of one fuzz run.
struct FuzzStats {
  int valid = 0, errors = 0;
};

inline std::string mutate(const std::string& s, std::mt19937_64& rng) {
  std::string t = s;
  auto pick = [&](std::size_t n) { return n == 0 ? std::size_t(0) : std::size_t(rng() % n); };
  auto line_starts = [&](const std::string& x) {
    std::vector<std::size_t> st{0};
    for (std::size_t i = 0; i < x.size(); ++i)
      if (x[i] == '\n' && i + 1 < x.size()) st.push_back(i + 1);
    return st;
  };
  auto line_end = [&](const std::string& x, std::size_t b) {
    std::size_t e = x.find('\n', b);
    return e == std::string::npos ? x.size() : e + 1;
  };
  const int kinds = 9;
  int nmut = 1 + int(rng() % 3);
  for (int m = 0; m < nmut && !t.empty(); ++m) {
    switch (int(rng() % kinds)) {
      case 0: {  // byte flip
        t[pick(t.size())] ^= char(1u << (rng() % 8));
        break;
      }
      case 1: {  // random byte from an alphabet that keeps the text number-like
        static const char alpha[] = "0123456789 .-+eE\n%\tnaNIf\r";
        t[pick(t.size())] = alpha[pick(sizeof(alpha) - 1)];
        break;
      }
      case 2: {  // truncation
        t.resize(pick(t.size()));
        break;
      }
      case 3: {  // line deletion
        auto st = line_starts(t);
        std::size_t b = st[pick(st.size())];
        t.erase(b, line_end(t, b) - b);
        break;
      }
      case 4: {  // line duplication
        auto st = line_starts(t);
        std::size_t b = st[pick(st.size())];
        std::string line = t.substr(b, line_end(t, b) - b);
        if (line.empty() || line.back() != '\n') line += '\n';
        t.insert(line_end(t, b), line);
        break;
      }
      case 5: {  // swap two numbers (tokens) anywhere in the text
        std::vector<std::pair<std::size_t, std::size_t>> toks;
        for (std::size_t i = 0; i < t.size();) {
          while (i < t.size() && std::isspace(static_cast<unsigned char>(t[i]))) ++i;
          std::size_t b = i;
          while (i < t.size() && !std::isspace(static_cast<unsigned char>(t[i]))) ++i;
          if (i > b) toks.emplace_back(b, i - b);
        }
        if (toks.size() < 2) break;
        auto a = toks[pick(toks.size())], c = toks[pick(toks.size())];
        if (a.first > c.first) std::swap(a, c);
        if (a.first == c.first) break;
        std::string ta = t.substr(a.first, a.second), tc = t.substr(c.first, c.second);
        t.replace(c.first, c.second, ta);
        t.replace(a.first, a.second, tc);
        break;
      }
      case 6: {  // replace a token by an extreme or odd value
        static const char* odd[] = {"0", "-1", "2147483647", "2147483648", "99999999999999999999", "1e308",
                                    "1e309", "-1e-320", "nan", "inf", "-Inf", "1.5", "x", "", "1 2", "0x10",
                                    "1D+02", "+3", "--1", "1e", "."};
        std::size_t b = pick(t.size());
        while (b > 0 && !std::isspace(static_cast<unsigned char>(t[b - 1]))) --b;
        std::size_t e = b;
        while (e < t.size() && !std::isspace(static_cast<unsigned char>(t[e]))) ++e;
        t.replace(b, e - b, odd[pick(sizeof(odd) / sizeof(odd[0]))]);
        break;
      }
      case 7: {  // insert random bytes
        std::string junk;
        for (std::size_t k = 0, n = 1 + pick(8); k < n; ++k) junk += char(rng() & 0xff);
        t.insert(pick(t.size() + 1), junk);
        break;
      }
      default: {  // swap two lines
        auto st = line_starts(t);
        if (st.size() < 2) break;
        std::size_t a = pick(st.size()), c = pick(st.size());
        if (a == c) break;
        if (a > c) std::swap(a, c);
        std::size_t ab = st[a], ae = line_end(t, ab), cb = st[c], ce = line_end(t, cb);
        std::string la = t.substr(ab, ae - ab), lc = t.substr(cb, ce - cb);
        if (la.empty() || la.back() != '\n' || lc.empty() || lc.back() != '\n') break;
        t.replace(cb, ce - cb, la);
        t.replace(ab, ae - ab, lc);
        break;
      }
    }
  }
  return t;
}

// Mutates the gzip stream itself (bytes, truncation): exercises zlib error paths.
inline std::string mutate_bytes(const std::string& s, std::mt19937_64& rng) {
  std::string t = s;
  if (t.empty()) return t;
  switch (rng() % 3) {
    case 0:
      t[rng() % t.size()] ^= char(1u << (rng() % 8));
      break;
    case 1:
      t.resize(rng() % t.size());
      break;
    default:
      t += std::string(1 + rng() % 16, char(rng() & 0xff));
      break;
  }
  return t;
}

inline void run_one(const std::string& bytes, const std::string& name, FuzzStats& st, std::string& last_msg) {
  std::istringstream in(bytes);
  try {
    CscMatrix32 A = read_matrix_market(in, name);
    expect_valid_lower_csc(A);
    ++st.valid;
  } catch (const stardiff::Error& e) {
    last_msg = e.what();
    ASSERT_EQ(last_msg.rfind(name + ":", 0), 0u) << "message does not name the input: " << last_msg;
    ++st.errors;
  }
  // Any other exception type escapes and fails the test; a crash fails it too.
}

inline FuzzStats fuzz_reader(const std::string& text, const std::string& name, int iterations, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  FuzzStats st;
  std::string msg;
  for (int it = 0; it < iterations; ++it) {
    std::string t = mutate(text, rng);
    SCOPED_TRACE("iteration " + std::to_string(it));
    run_one(t, name, st, msg);
    if (::testing::Test::HasFatalFailure()) return st;
    if (it % 8 == 0) {  // the same through gzip, and a damaged gzip stream
      run_one(gzip(t), name, st, msg);
      run_one(mutate_bytes(gzip(text), rng), name, st, msg);
      if (::testing::Test::HasFatalFailure()) return st;
    }
  }
  return st;
}

}  // namespace stardiff::sparse::testing
