// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_sparse_reader_mm.cpp — Matrix Market reader on small hand-written files:
// exact values and patterns for symmetric/general/pattern/integer files, duplicates,
// missing diagonals, explicit zeros, gzip by magic bytes, and "name:line: what" errors
// for every malformed case the reader promises to reject.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "stardiff/runtime/error.hpp"
#include "stardiff/sparse/matrix_market.hpp"
#include "test_sparse_reader_support.hpp"

using namespace stardiff;
using namespace stardiff::sparse;
using stardiff::sparse::testing::expect_valid_lower_csc;
using stardiff::sparse::testing::gzip;

namespace {

CscMatrix32 read(const std::string& text, const ReadOptions& o = {}) {
  std::istringstream in(text);
  return read_matrix_market(in, "t.mtx", o);
}

// (row, col) -> value of the stored lower triangle, 1-based like the file.
std::map<std::pair<int, int>, double> entries(const CscMatrix32& A) {
  std::map<std::pair<int, int>, double> m;
  for (int j = 0; j < A.n_cols; ++j)
    for (int p = A.col_ptr[j]; p < A.col_ptr[j + 1]; ++p) m[{A.row_idx[p] + 1, j + 1}] = A.values[p];
  return m;
}

// Expects an Error whose message starts with "t.mtx:LINE:" and contains `what`.
void expect_error(const std::string& text, int line, const std::string& what) {
  try {
    read(text);
    ADD_FAILURE() << "no error for:\n" << text;
  } catch (const Error& e) {
    std::string msg = e.what();
    std::string prefix = "t.mtx:" + std::to_string(line) + ":";
    EXPECT_EQ(msg.rfind(prefix, 0), 0u) << "expected prefix '" << prefix << "' in: " << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << "expected '" << what << "' in: " << msg;
  }
}

const char* kSym =
    "%%MatrixMarket matrix coordinate real symmetric\n"
    "% a comment\n"
    "4 4 6\n"
    "1 1 4.0\n"
    "2 1 -1.5\n"
    "2 2 5e0\n"
    "4 2 +2.25\n"
    "4 4 1.0D+01\n"
    "3 1 0\n";

}  // namespace

TEST(SparseReaderMm, SymmetricValuesMissingDiagonalAndExplicitZero) {
  CscMatrix32 A = read(kSym);
  expect_valid_lower_csc(A);
  EXPECT_EQ(A.n_rows, 4);
  EXPECT_EQ(A.name, "t.mtx");
  auto m = entries(A);
  std::map<std::pair<int, int>, double> want = {{{1, 1}, 4.0}, {{2, 1}, -1.5}, {{3, 1}, 0.0}, {{2, 2}, 5.0},
                                                {{4, 2}, 2.25}, {{3, 3}, 0.0}, {{4, 4}, 10.0}};
  EXPECT_EQ(m, want);  // (3,3) added as an explicit zero, (3,1) explicit zero kept
  EXPECT_EQ(A.nnz(), 7);
}

TEST(SparseReaderMm, DuplicatesSummedAndUpperEntriesMirrored) {
  CscMatrix32 A = read(
      "%%MatrixMarket matrix coordinate real symmetric\n3 3 5\n1 1 1\n1 1 2\n1 3 7\n1 3 0.5\n2 2 1\n");
  auto m = entries(A);
  EXPECT_DOUBLE_EQ((m[{1, 1}]), 3.0);
  EXPECT_DOUBLE_EQ((m[{3, 1}]), 7.5);  // (1,3) twice: summed, mirrored to (3,1)
  EXPECT_EQ(m.count({1, 3}), 0u);
  EXPECT_DOUBLE_EQ((m[{3, 3}]), 0.0);
  EXPECT_EQ(A.nnz(), 4);
}

TEST(SparseReaderMm, SymmetricFileStoringBothTrianglesIsAnError) {
  // [[2, 1], [1, 2]] written in full under a `symmetric` header: summing would give [[2, 2], [2, 2]].
  const std::string h = "%%MatrixMarket matrix coordinate real symmetric\n";
  expect_error(h + "2 2 4\n1 1 2\n2 1 1\n1 2 1\n2 2 2\n", 4, "entry (2, 1) is given again as (1, 2) on t.mtx:5");
  expect_error(h + "3 3 4\n1 3 1\n2 2 1\n1 3 1\n3 1 1\n", 3, "entry (1, 3) is given again as (3, 1) on t.mtx:6");
  // The upper triangle alone is mirrored.
  std::map<std::pair<int, int>, double> want = {{{1, 1}, 2}, {{2, 1}, 1}, {{2, 2}, 2}};
  EXPECT_EQ(entries(read(h + "2 2 3\n1 1 2\n1 2 1\n2 2 2\n")), want);
}

TEST(SparseReaderMm, InsertDiagonalOffKeepsTheFilesPattern) {
  ReadOptions o;
  o.insert_diagonal = false;
  CscMatrix32 A = read(kSym, o);
  auto m = entries(A);
  std::map<std::pair<int, int>, double> want = {{{1, 1}, 4.0}, {{2, 1}, -1.5}, {{3, 1}, 0.0}, {{2, 2}, 5.0},
                                                {{4, 2}, 2.25}, {{4, 4}, 10.0}};
  EXPECT_EQ(m, want);  // no (3,3): absent from the file; the explicit zero (3,1) kept
  EXPECT_EQ(A.nnz(), 6);
  EXPECT_TRUE(A.symmetric_lower);
  CscMatrix32 G = read("%%MatrixMarket matrix coordinate real general\n2 2 2\n2 1 3\n1 2 3\n", o);
  EXPECT_EQ(entries(G), (std::map<std::pair<int, int>, double>{{{2, 1}, 3.0}}));
}

TEST(SparseReaderMm, GeneralSymmetricFileGivesLowerTriangle) {
  CscMatrix32 A = read(
      "%%MatrixMarket matrix coordinate real general\n3 3 6\n1 1 2\n2 1 -1\n1 2 -1\n3 2 4\n2 3 4.0\n3 3 1\n");
  auto m = entries(A);
  std::map<std::pair<int, int>, double> want = {{{1, 1}, 2}, {{2, 1}, -1}, {{2, 2}, 0}, {{3, 2}, 4}, {{3, 3}, 1}};
  EXPECT_EQ(m, want);
  expect_valid_lower_csc(A);
}

TEST(SparseReaderMm, GeneralWithinToleranceAveraged) {
  ReadOptions o;
  o.symmetry_tol = 1e-6;
  CscMatrix32 A = read("%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 1 1.0000001\n1 2 1\n", o);
  EXPECT_DOUBLE_EQ((entries(A)[{2, 1}]), 0.5 * 1.0000001 + 0.5);
}

TEST(SparseReaderMm, GeneralUnsymmetricNamesFirstOffendingEntry) {
  // (2,1)=1 and (1,2)=3: the pair's first entry is on line 4.
  expect_error("%%MatrixMarket matrix coordinate real general\n3 3 5\n1 1 1\n2 1 1\n3 3 1\n1 2 3\n3 1 9\n", 4,
               "entry (2, 1) = 1 but (1, 2) = 3");
  // An entry whose mirror is absent.
  expect_error("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n3 2 2\n", 4,
               "entry (3, 2) = 2 but (2, 3) = 0 (absent)");
  // Duplicates are summed before the check: 1 + 2 = 3 matches (1,2) = 3.
  EXPECT_NO_THROW(read("%%MatrixMarket matrix coordinate real general\n2 2 3\n2 1 1\n1 2 3\n2 1 2\n"));
}

TEST(SparseReaderMm, PatternAndIntegerFields) {
  CscMatrix32 P = read("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 1\n3 1\n2 2\n");
  std::map<std::pair<int, int>, double> wantp = {{{1, 1}, 1}, {{3, 1}, 1}, {{2, 2}, 1}, {{3, 3}, 0}};
  EXPECT_EQ(entries(P), wantp);
  CscMatrix32 I = read("%%MatrixMarket matrix coordinate integer general\n2 2 4\n1 1 -3\n2 1 7\n1 2 7\n2 2 +2\n");
  std::map<std::pair<int, int>, double> wanti = {{{1, 1}, -3}, {{2, 1}, 7}, {{2, 2}, 2}};
  EXPECT_EQ(entries(I), wanti);
  expect_error("%%MatrixMarket matrix coordinate integer symmetric\n2 2 1\n1 1 1.5\n", 3, "bad integer value '1.5'");
  expect_error("%%MatrixMarket matrix coordinate pattern symmetric\n2 2 1\n1 1 1.5\n", 3, "unexpected token '1.5'");
}

TEST(SparseReaderMm, CaseInsensitiveHeaderCrlfAndBlankLines) {
  CscMatrix32 A = read("%%MatrixMarket MATRIX Coordinate Real Symmetric\r\n\r\n%c\r\n2 2 2\r\n1 1 1\r\n\r\n2 2 2\r\n");
  std::map<std::pair<int, int>, double> want = {{{1, 1}, 1}, {{2, 2}, 2}};
  EXPECT_EQ(entries(A), want);
}

TEST(SparseReaderMm, UnderflowIsZeroNotError) {
  CscMatrix32 A = read("%%MatrixMarket matrix coordinate real symmetric\n1 1 1\n1 1 1e-400\n");
  EXPECT_EQ(A.values[0], 0.0);
}

TEST(SparseReaderMm, RejectsUnsupportedKinds) {
  expect_error("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 1\n", 1, "skew-symmetric");
  expect_error("%%MatrixMarket matrix coordinate complex symmetric\n2 2 1\n1 1 1 0\n", 1, "complex");
  expect_error("%%MatrixMarket matrix coordinate complex hermitian\n2 2 1\n1 1 1 0\n", 1, "complex");
  expect_error("%%MatrixMarket matrix coordinate real hermitian\n2 2 1\n1 1 1\n", 1, "hermitian");
  expect_error("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", 1, "array");
  expect_error("%%MatrixMarket vector coordinate real general\n2 1\n1 1\n", 1, "object 'vector'");
}

TEST(SparseReaderMm, RejectsBadHeaders) {
  expect_error("", 1, "empty file");
  expect_error("3 3 1\n1 1 1\n", 1, "not a Matrix Market file");
  expect_error("%%MatrixMarket matrix coordinate real\n1 1 1\n1 1 1\n", 1, "unknown Matrix Market symmetry ''");
  expect_error("%%MatrixMarket matrix coordinate real symmetric extra\n1 1 1\n1 1 1\n", 1, "unexpected token 'extra'");
  expect_error("%%MatrixMarket matrix sparse real symmetric\n1 1 1\n1 1 1\n", 1, "unknown Matrix Market format");
}

TEST(SparseReaderMm, RejectsBadSizeLines) {
  expect_error("%%MatrixMarket matrix coordinate real symmetric\n% only comments\n", 3, "missing size line");
  expect_error("%%MatrixMarket matrix coordinate real symmetric\n3 3\n1 1 1\n", 2, "bad size line '3 3'");
  expect_error("%%MatrixMarket matrix coordinate real symmetric\n3 x 1\n1 1 1\n", 2, "three non-negative integers");
  expect_error("%%MatrixMarket matrix coordinate real symmetric\n3 3 1 4\n1 1 1\n", 2, "unexpected token '4'");
  expect_error("%%MatrixMarket matrix coordinate real symmetric\n3 3 -1\n", 2, "negative");
  expect_error("%%MatrixMarket matrix coordinate real general\n3 4 1\n1 1 1\n", 2, "not square (3 x 4)");
  expect_error("%%MatrixMarket matrix coordinate real symmetric\n0 0 0\n", 2, "empty matrix");
  expect_error("%%MatrixMarket matrix coordinate real symmetric\n3000000000 3000000000 1\n1 1 1\n", 2,
               "does not fit 32-bit");
}

TEST(SparseReaderMm, RejectsWrongEntryCounts) {
  expect_error("%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 1\n2 2 1\n", 5,
               "end of file after 2 of the 3 entries declared on line 2");
  expect_error("%%MatrixMarket matrix coordinate real symmetric\n3 3 1\n1 1 1\n2 2 1\n", 4,
               "more entries than the 1 declared on line 2");
  // Trailing comments and blank lines are fine.
  EXPECT_NO_THROW(read("%%MatrixMarket matrix coordinate real symmetric\n1 1 1\n1 1 1\n\n% end\n"));
}

TEST(SparseReaderMm, RejectsBadEntries) {
  const std::string h = "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 1 1\n";
  expect_error(h + "4 1 1\n", 4, "index (4, 1) is outside the 3 x 3 matrix");
  expect_error(h + "0 1 1\n", 4, "index (0, 1) is outside");
  expect_error(h + "2 -1 1\n", 4, "index (2, -1) is outside");
  expect_error(h + "2 1 nan\n", 4, "non-finite value 'nan'");
  expect_error(h + "2 1 -Inf\n", 4, "non-finite value '-Inf'");
  expect_error(h + "2 1 1e999\n", 4, "non-finite value '1e999'");
  expect_error(h + "2 1 1.0.0\n", 4, "bad value '1.0.0'");
  expect_error(h + "2 1 0x10\n", 4, "bad value '0x10'");
  expect_error(h + "2 1\n", 4, "missing value for entry (2, 1)");
  expect_error(h + "2\n", 4, "missing column index");
  expect_error(h + "a 1 1\n", 4, "bad row index 'a'");
  expect_error(h + "2 1.5 1\n", 4, "bad column index '1.5'");
  expect_error(h + "2 1 1 7\n", 4, "unexpected token '7' after entry (2, 1)");
  expect_error(h + "2 1 --1\n", 4, "bad value '--1'");
  expect_error(h + "2 1 +-1\n", 4, "bad value '+-1'");
  expect_error(h + "+-2 1 1\n", 4, "bad row index '+-2'");
  expect_error("%%MatrixMarket matrix coordinate integer symmetric\n1 1 1\n1 1 +-3\n", 3, "bad integer value '+-3'");
  expect_error(h + "2 1 1e308\n2 1 1e308\n", 5, "more entries");  // count checked before sums
}

TEST(SparseReaderMm, DuplicatesOverflowingIsAnError) {
  try {
    read("%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 1e308\n2 1 1e308\n");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(2, 1) sum to a non-finite value"), std::string::npos) << e.what();
  }
  try {
    read("%%MatrixMarket matrix coordinate real general\n2 2 2\n2 1 1e308\n2 1 1e308\n");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("t.mtx:3:", 0), 0u) << e.what();
  }
}

TEST(SparseReaderMm, GzipByMagicBytesFromStreamAndFile) {
  const std::string z = gzip(kSym);
  std::istringstream in(z);
  CscMatrix32 A = read_matrix_market(in, "mem");
  EXPECT_EQ(entries(A), entries(read(kSym)));
  // A .mtx name holding gzip data and a .gz name holding plain text both work.
  char tmpl[] = "/tmp/stardiff_mm_XXXXXX";
  int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  close(fd);
  std::string base = tmpl;
  {
    std::ofstream(base + ".mtx", std::ios::binary) << z;
    std::ofstream(base + ".mtx.gz", std::ios::binary) << kSym;
  }
  EXPECT_EQ(entries(read_matrix_market(base + ".mtx")), entries(A));
  EXPECT_EQ(entries(read_matrix_market(base + ".mtx.gz")), entries(A));
  EXPECT_EQ(read_matrix_market(base + ".mtx").name, base + ".mtx");
  // Two concatenated gzip members are one text.
  std::string text = kSym;
  std::size_t half = text.find("2 2 5e0");
  std::string two = gzip(text.substr(0, half)) + gzip(text.substr(half));
  std::istringstream in2(two);
  EXPECT_EQ(entries(read_matrix_market(in2, "two")), entries(A));
  std::remove((base + ".mtx").c_str());
  std::remove((base + ".mtx.gz").c_str());
  std::remove(tmpl);
}

TEST(SparseReaderMm, TruncatedOrCorruptGzipIsAnError) {
  std::string text = "%%MatrixMarket matrix coordinate real symmetric\n200 200 200\n";
  for (int i = 1; i <= 200; ++i) text += std::to_string(i) + " " + std::to_string(i) + " " + std::to_string(i * 0.37) + "\n";
  const std::string z = gzip(text);
  for (std::size_t cut : {z.size() - 1, z.size() - 8, z.size() / 2, std::size_t(12)}) {
    std::istringstream in(z.substr(0, cut));
    try {
      read_matrix_market(in, "cut.mtx.gz");
      ADD_FAILURE() << "no error at cut " << cut;
    } catch (const Error& e) {
      std::string msg = e.what();
      EXPECT_EQ(msg.rfind("cut.mtx.gz:", 0), 0u) << msg;
      EXPECT_NE(msg.find("truncated gzip"), std::string::npos) << msg;
    }
  }
  std::string bad = z;
  bad[bad.size() - 6] ^= 0x55;  // CRC/length trailer
  std::istringstream in(bad);
  EXPECT_THROW(read_matrix_market(in, "bad.gz"), Error);
}

TEST(SparseReaderMm, MissingFileNamesPath) {
  try {
    read_matrix_market("/nonexistent/dir/x.mtx");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/x.mtx: cannot open"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_matrix_market("/tmp"), Error);  // a directory
}

TEST(SparseReaderMm, QuotedInputIsCutAndNonPrintableBytesEscaped) {
  // The same rule as the MATPOWER reader (src/core/quote.hpp): 40 bytes, then "...",
  // bytes outside printable ASCII as \xHH.
  expect_error("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 1 \x1f\x02z\n", 3,
               "bad value '\\x1f\\x02z'");
  expect_error("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 1 " + std::string(5000, 'q') + "\n", 3,
               "bad value '" + std::string(40, 'q') + "...'");
}
