// SPDX-License-Identifier: LGPL-2.1-or-later
// src/sparse/matrix_market.cpp — Matrix Market reader (.mtx, gzip-compressed .mtx.gz).
//
// Contract (see matrix_market.hpp):
//  * The whole file is read into memory; gzip is recognised by its magic bytes (1f 8b),
//    not by the file name, and inflated in memory with zlib (multi-member streams are
//    concatenated; trailing non-gzip bytes are ignored as gzip(1) does). A truncated or
//    corrupt stream is an Error naming the line reached.
//  * Accepted: `%%MatrixMarket matrix coordinate real|integer|pattern symmetric|general`
//    (keywords case-insensitive). Rejected with a clear message: array, complex,
//    hermitian, skew-symmetric, non-square, empty (0 x 0) matrices.
//  * Numbers are parsed by std::from_chars (a leading '+' and Fortran 'D' exponents are
//    accepted; values that underflow become 0 or subnormal); NaN, Inf and overflow are
//    errors. Integer fields must hold integers. Every token of an entry line is checked:
//    missing or extra tokens, garbage, indices outside 1..n are "file:line: ..." errors,
//    as are fewer or more entries than the size line declares. Blank and '%' lines are
//    skipped anywhere after the header.
//  * Symmetric files: entries above the diagonal are mirrored into the lower triangle
//    (writers that store the upper triangle work); duplicates are summed in file order;
//    an off-diagonal entry stored in both triangles, (i, j) and (j, i), is an error naming
//    both lines.
//  * General files: duplicates are summed, then every pair must satisfy
//    |a_ij - a_ji| <= symmetry_tol * max|a| (a missing partner counts as 0); the violating
//    pair whose first entry comes earliest in the file is named with its line. The
//    lower triangle of the union pattern is kept, with value (a_ij + a_ji) / 2.
//  * A size line whose matrix would not fit the available memory (memory_guard.hpp) is
//    an Error naming the size and the estimate, before anything is allocated.
//  * Missing diagonal entries are inserted as explicit zeros (unless insert_diagonal is
//    false: the file's own pattern); explicit zeros are kept.
#include "stardiff/sparse/matrix_market.hpp"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/quote.hpp"
#include "sparse/csc_internal.hpp"
#include "sparse/memory_guard.hpp"
#include "stardiff/runtime/error.hpp"

namespace stardiff::sparse {
namespace {

bool is_gzip(std::string_view s) {
  return s.size() >= 2 && static_cast<unsigned char>(s[0]) == 0x1f && static_cast<unsigned char>(s[1]) == 0x8b;
}

std::int64_t count_lines(std::string_view s) {
  return 1 + std::count(s.begin(), s.end(), '\n');
}

// Inflates one or more concatenated gzip members.
std::string inflate_gzip(std::string_view in, const std::string& name) {
  std::string out;
  out.reserve(std::min<std::size_t>(in.size() * 4 + 1024, std::size_t(1) << 30));
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) throw Error(name + ": zlib inflateInit2 failed");
  struct Guard {
    z_stream* z;
    ~Guard() { inflateEnd(z); }
  } guard{&zs};
  if (in.size() > std::numeric_limits<uInt>::max()) throw Error(name + ": compressed file larger than 4 GiB");
  const Bytef* base = reinterpret_cast<const Bytef*>(in.data());
  zs.next_in = const_cast<Bytef*>(base);
  zs.avail_in = static_cast<uInt>(in.size());
  auto truncated = [&] {
    return Error(name + ":" + std::to_string(count_lines(out)) +
                 ": truncated gzip stream (the compressed data ends inside a member)");
  };
  char buf[1 << 16];
  for (;;) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    int rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - zs.avail_out);
    if (rc == Z_STREAM_END) {
      std::string_view rest = in.substr(std::size_t(zs.next_in - base));
      if (!is_gzip(rest)) break;  // end, or trailing garbage (ignored as gzip(1) does)
      inflateReset(&zs);
      continue;
    }
    if (rc == Z_OK) {
      if (zs.avail_in == 0 && zs.avail_out != 0) throw truncated();
      continue;
    }
    if (rc == Z_BUF_ERROR) throw truncated();
    throw Error(name + ":" + std::to_string(count_lines(out)) + ": corrupt gzip data (zlib: " +
                (zs.msg ? std::string(zs.msg) : "error " + std::to_string(rc)) + ")");
  }
  return out;
}

std::string printable(std::string_view tok) { return stardiff::detail::quote_input(tok); }

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

// Splits a text into lines and lines into whitespace-separated tokens.
class Scanner {
 public:
  Scanner(std::string_view text, const std::string& name) : p_(text.data()), end_(text.data() + text.size()), name_(name) {}

  // Advances to the next line; false at end of text. line() is its 1-based number.
  bool next_line() {
    if (p_ >= end_) return false;
    const char* nl = static_cast<const char*>(std::memchr(p_, '\n', end_ - p_));
    lb_ = p_;
    le_ = nl ? nl : end_;
    p_ = nl ? nl + 1 : end_;
    tok_ = lb_;
    ++line_;
    return true;
  }
  std::int64_t line() const { return line_; }
  std::string_view text() const { return {lb_, std::size_t(le_ - lb_)}; }
  // Blank or comment line (the first non-blank character is '%').
  bool skippable() const {
    const char* q = lb_;
    while (q < le_ && is_space(*q)) ++q;
    return q == le_ || *q == '%';
  }
  // The next token of the current line; empty when none is left.
  std::string_view token() {
    while (tok_ < le_ && is_space(*tok_)) ++tok_;
    const char* b = tok_;
    while (tok_ < le_ && !is_space(*tok_)) ++tok_;
    return {b, std::size_t(tok_ - b)};
  }
  [[noreturn]] void fail(const std::string& what) const { fail_at(line_, what); }
  [[noreturn]] void fail_at(std::int64_t line, const std::string& what) const {
    throw Error(name_ + ":" + std::to_string(line) + ": " + what);
  }

 private:
  const char* p_;
  const char* end_;
  const char* lb_ = nullptr;
  const char* le_ = nullptr;
  const char* tok_ = nullptr;
  std::int64_t line_ = 0;
  const std::string& name_;
};

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

bool parse_int(std::string_view tok, std::int64_t& v) {
  if (tok.empty()) return false;
  const char* b = tok.data();
  const char* e = b + tok.size();
  if (*b == '+') {
    ++b;
    if (b == e || *b == '-') return false;
  }
  auto r = std::from_chars(b, e, v);
  return r.ec == std::errc() && r.ptr == e && b != e;
}

// Returns false for garbage; sets `finite` false for NaN/Inf/overflow.
bool parse_real(std::string_view tok, double& v, bool& finite) {
  finite = true;
  if (tok.empty() || tok.size() > 400) return false;
  const char* b = tok.data();
  const char* e = b + tok.size();
  if (*b == '+') {
    ++b;
    if (b == e || *b == '-' || *b == '+') return false;
  }
  auto r = std::from_chars(b, e, v, std::chars_format::general);
  if (r.ptr != e || r.ec == std::errc::invalid_argument) {
    // Fortran exponent (1.0D+03), or an out-of-range value: retry on a normalised copy.
    char buf[416];
    std::size_t n = std::size_t(e - b);
    std::memcpy(buf, b, n);
    buf[n] = '\0';
    bool fortran = false;
    for (std::size_t i = 0; i < n; ++i)
      if (buf[i] == 'D' || buf[i] == 'd') {
        buf[i] = 'e';
        fortran = true;
      }
    if (!fortran) return false;
    r = std::from_chars(buf, buf + n, v, std::chars_format::general);
    if (r.ptr != buf + n || r.ec == std::errc::invalid_argument) return false;
    if (r.ec == std::errc::result_out_of_range) {
      errno = 0;
      v = std::strtod(buf, nullptr);
    }
  } else if (r.ec == std::errc::result_out_of_range) {
    std::string copy(b, e);
    v = std::strtod(copy.c_str(), nullptr);  // underflow -> 0/subnormal, overflow -> inf
  }
  if (!std::isfinite(v)) finite = false;
  return true;
}

struct Entries {
  std::vector<std::int32_t> rows, cols;  // 0-based
  std::vector<double> vals;
  std::vector<std::int64_t> lines;
};

// CSC of the triplets (duplicates summed in file order) with the first line of each entry.
struct LinedCsc {
  std::vector<std::int64_t> ptr;
  std::vector<std::int32_t> idx;
  std::vector<double> val;
  std::vector<std::int64_t> line;
};

LinedCsc build_lined(std::int32_t n, const std::vector<std::int32_t>& major, const std::vector<std::int32_t>& minor,
                     const Entries& e) {
  const std::size_t nt = major.size();
  std::vector<std::size_t> mp(std::size_t(n) + 1, 0), order(nt), tmp(nt);
  for (std::size_t k = 0; k < nt; ++k) ++mp[std::size_t(minor[k]) + 1];
  for (std::int32_t i = 0; i < n; ++i) mp[i + 1] += mp[i];
  {
    std::vector<std::size_t> next(mp.begin(), mp.end() - 1);
    for (std::size_t k = 0; k < nt; ++k) tmp[next[minor[k]]++] = k;
  }
  std::vector<std::size_t> cp(std::size_t(n) + 1, 0);
  for (std::size_t k = 0; k < nt; ++k) ++cp[std::size_t(major[k]) + 1];
  for (std::int32_t j = 0; j < n; ++j) cp[j + 1] += cp[j];
  {
    std::vector<std::size_t> next(cp.begin(), cp.end() - 1);
    for (std::size_t k : tmp) order[next[major[k]]++] = k;
  }
  LinedCsc c;
  c.ptr.assign(std::size_t(n) + 1, 0);
  c.idx.reserve(nt);
  c.val.reserve(nt);
  c.line.reserve(nt);
  for (std::int32_t j = 0; j < n; ++j) {
    std::size_t start = c.idx.size();
    for (std::size_t p = cp[j]; p < cp[j + 1]; ++p) {
      std::size_t k = order[p];
      if (c.idx.size() > start && c.idx.back() == minor[k]) {
        c.val.back() += e.vals[k];
        c.line.back() = std::min(c.line.back(), e.lines[k]);
      } else {
        c.idx.push_back(minor[k]);
        c.val.push_back(e.vals[k]);
        c.line.push_back(e.lines[k]);
      }
    }
    c.ptr[j + 1] = std::int64_t(c.idx.size());
  }
  return c;
}

std::string fmt(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

// Symmetry check of a general file and extraction of the lower triangle.
CscMatrix32 symmetrize_general(std::int32_t n, const Entries& e, double tol, const Scanner& sc) {
  double maxabs = 0;
  for (double v : e.vals) maxabs = std::max(maxabs, std::abs(v));
  LinedCsc A = build_lined(n, e.cols, e.rows, e);   // columns of A
  LinedCsc T = build_lined(n, e.rows, e.cols, e);   // columns of A^T (rows of A)
  for (std::size_t k = 0; k < A.val.size(); ++k)
    if (!std::isfinite(A.val[k])) sc.fail_at(A.line[k], "duplicate entries sum to a non-finite value");
  const double bound = tol * maxabs;
  std::int64_t bad_line = std::numeric_limits<std::int64_t>::max();
  std::string bad_msg;
  std::vector<std::int32_t> rows, cols;
  std::vector<double> vals;
  rows.reserve(A.idx.size() / 2 + n);
  cols.reserve(rows.capacity());
  vals.reserve(rows.capacity());
  for (std::int32_t j = 0; j < n; ++j) {
    std::int64_t pa = A.ptr[j], ea = A.ptr[j + 1], pt = T.ptr[j], et = T.ptr[j + 1];
    while (pa < ea && A.idx[pa] < j) ++pa;
    while (pt < et && T.idx[pt] < j) ++pt;
    while (pa < ea || pt < et) {
      std::int32_t ra = pa < ea ? A.idx[pa] : std::numeric_limits<std::int32_t>::max();
      std::int32_t rt = pt < et ? T.idx[pt] : std::numeric_limits<std::int32_t>::max();
      std::int32_t r = std::min(ra, rt);
      bool has_a = ra == r, has_t = rt == r;
      double a = has_a ? A.val[pa] : 0.0;       // a_rj
      double b = has_t ? T.val[pt] : 0.0;       // a_jr
      std::int64_t la = has_a ? A.line[pa] : std::numeric_limits<std::int64_t>::max();
      std::int64_t lt = has_t ? T.line[pt] : std::numeric_limits<std::int64_t>::max();
      if (r != j && !(std::abs(a - b) <= bound)) {
        std::int64_t l = std::min(la, lt);
        if (l < bad_line) {
          bad_line = l;
          // Name the entry on that line first, then its partner.
          std::int64_t i1 = la <= lt ? r : j, j1 = la <= lt ? j : r;
          double v1 = la <= lt ? a : b, v2 = la <= lt ? b : a;
          bool partner = la <= lt ? has_t : has_a;
          bad_msg = "general matrix is not symmetric: entry (" + std::to_string(i1 + 1) + ", " +
                    std::to_string(j1 + 1) + ") = " + fmt(v1) + " but (" + std::to_string(j1 + 1) + ", " +
                    std::to_string(i1 + 1) + ") = " + (partner ? fmt(v2) : std::string("0 (absent)")) +
                    "; |difference| exceeds symmetry_tol * max|a| = " + fmt(bound);
        }
      }
      if (r != j) {
        rows.push_back(r);
        cols.push_back(j);
        vals.push_back(a == b ? a : 0.5 * a + 0.5 * b);
      } else {
        rows.push_back(r);
        cols.push_back(j);
        vals.push_back(a);
      }
      if (has_a) ++pa;
      if (has_t) ++pt;
    }
  }
  if (bad_line != std::numeric_limits<std::int64_t>::max()) sc.fail_at(bad_line, bad_msg);
  return from_triplets(n, n, rows, cols, vals, true);
}

// Inserts explicit zeros where a diagonal entry is absent.
void add_missing_diagonal(CscMatrix32& A) {
  const std::int32_t n = A.n_cols;
  std::int64_t missing = 0;
  for (std::int32_t j = 0; j < n; ++j) {
    bool found = false;
    for (std::int32_t p = A.col_ptr[j]; p < A.col_ptr[j + 1]; ++p)
      if (A.row_idx[p] == j) {
        found = true;
        break;
      }
    if (!found) ++missing;
  }
  if (missing == 0) return;
  require(std::int64_t(A.row_idx.size()) + missing <= std::numeric_limits<std::int32_t>::max(),
          A.name + ": more than 2^31-1 entries do not fit 32-bit indices");
  std::vector<std::int32_t> ptr(std::size_t(n) + 1, 0), idx;
  std::vector<double> val;
  idx.reserve(A.row_idx.size() + missing);
  val.reserve(A.row_idx.size() + missing);
  for (std::int32_t j = 0; j < n; ++j) {
    std::int32_t p = A.col_ptr[j], e = A.col_ptr[j + 1];
    if (p == e || A.row_idx[p] != j) {  // lower triangle: the diagonal comes first when present
      idx.push_back(j);
      val.push_back(0.0);
    }
    for (; p < e; ++p) {
      idx.push_back(A.row_idx[p]);
      val.push_back(A.values[p]);
    }
    ptr[j + 1] = std::int32_t(idx.size());
  }
  A.col_ptr.swap(ptr);
  A.row_idx.swap(idx);
  A.values.swap(val);
}

CscMatrix32 parse(std::string_view text, const std::string& name, const ReadOptions& opts) {
  Scanner sc(text, name);
  if (!sc.next_line()) sc.fail_at(1, "empty file (expected a %%MatrixMarket header)");
  std::string_view banner = sc.token();
  if (lower(banner) != "%%matrixmarket")
    sc.fail("not a Matrix Market file: the first line must start with %%MatrixMarket, found '" +
            printable(banner) + "'");
  std::string object = lower(sc.token()), format = lower(sc.token()), field = lower(sc.token()),
              symmetry = lower(sc.token());
  if (object != "matrix")
    sc.fail("unsupported Matrix Market object '" + printable(object) + "' (only 'matrix')");
  if (format == "array")
    sc.fail("dense 'array' format is not supported (only 'coordinate')");
  if (format != "coordinate")
    sc.fail("unknown Matrix Market format '" + printable(format) + "' (expected 'coordinate')");
  if (field == "complex")
    sc.fail("complex matrices are not supported (only real, integer, pattern)");
  if (field != "real" && field != "integer" && field != "pattern" && field != "double")
    sc.fail("unknown Matrix Market field '" + printable(field) + "' (expected real, integer or pattern)");
  if (symmetry == "skew-symmetric")
    sc.fail("skew-symmetric matrices are not supported (an LDL^T solver needs a symmetric matrix)");
  if (symmetry == "hermitian")
    sc.fail("hermitian matrices are not supported (only real symmetric or general)");
  if (symmetry != "symmetric" && symmetry != "general")
    sc.fail("unknown Matrix Market symmetry '" + printable(symmetry) + "' (expected symmetric or general)");
  if (std::string_view extra = sc.token(); !extra.empty())
    sc.fail("unexpected token '" + printable(extra) + "' after the header");
  const bool pattern = field == "pattern", integer = field == "integer", symmetric = symmetry == "symmetric";

  // Size line.
  bool have_size = false;
  while (sc.next_line()) {
    if (sc.skippable()) continue;
    have_size = true;
    break;
  }
  if (!have_size) sc.fail_at(sc.line() + 1, "missing size line 'rows cols entries'");
  std::int64_t m = 0, n = 0, nnz = 0;
  {
    std::string_view t1 = sc.token(), t2 = sc.token(), t3 = sc.token(), t4 = sc.token();
    if (t3.empty())
      sc.fail("bad size line '" + printable(sc.text()) + "' (expected 'rows cols entries')");
    if (!parse_int(t1, m) || !parse_int(t2, n) || !parse_int(t3, nnz))
      sc.fail("bad size line '" + printable(sc.text()) + "' (expected three non-negative integers)");
    if (!t4.empty()) sc.fail("unexpected token '" + printable(t4) + "' on the size line");
    if (m < 0 || n < 0 || nnz < 0) sc.fail("negative number on the size line '" + printable(sc.text()) + "'");
  }
  if (m != n)
    sc.fail("matrix is not square (" + std::to_string(m) + " x " + std::to_string(n) +
            "); a symmetric solver needs a square matrix");
  if (n == 0) sc.fail("empty matrix (0 x 0)");
  if (n >= std::numeric_limits<std::int32_t>::max())
    sc.fail("dimension " + std::to_string(n) + " does not fit 32-bit indices");
  const std::int64_t size_line = sc.line();
  // Each entry takes at least 4 bytes ("i j\n"): the text bounds how many can follow.
  const std::size_t cap = std::min<std::size_t>(std::size_t(nnz), text.size() / 4 + 16);
  detail::require_memory(detail::reader_bytes(double(n), double(cap)), [&] {
    return name + ":" + std::to_string(size_line) + ": reading a " + std::to_string(n) + " x " + std::to_string(n) +
           " matrix with " + std::to_string(nnz) + " entries";
  });

  Entries e;
  {
    e.rows.reserve(cap);
    e.cols.reserve(cap);
    e.vals.reserve(cap);
    e.lines.reserve(cap);
  }
  std::int64_t count = 0;
  while (count < nnz) {
    if (!sc.next_line())
      sc.fail_at(sc.line() + 1, "end of file after " + std::to_string(count) + " of the " + std::to_string(nnz) +
                                    " entries declared on line " + std::to_string(size_line));
    if (sc.skippable()) continue;
    std::string_view ti = sc.token(), tj = sc.token();
    std::int64_t i = 0, j = 0;
    if (!parse_int(ti, i))
      sc.fail("bad row index '" + printable(ti) + "' (expected an integer)");
    if (tj.empty()) sc.fail("missing column index after row index " + printable(ti));
    if (!parse_int(tj, j))
      sc.fail("bad column index '" + printable(tj) + "' (expected an integer)");
    if (i < 1 || i > n || j < 1 || j > n)
      sc.fail("index (" + std::to_string(i) + ", " + std::to_string(j) + ") is outside the " + std::to_string(n) +
              " x " + std::to_string(n) + " matrix (indices are 1-based)");
    double v = 1.0;
    if (!pattern) {
      std::string_view tv = sc.token();
      if (tv.empty()) sc.fail("missing value for entry (" + std::to_string(i) + ", " + std::to_string(j) + ")");
      if (integer) {
        std::int64_t iv = 0;
        if (!parse_int(tv, iv)) sc.fail("bad integer value '" + printable(tv) + "'");
        v = double(iv);
      } else {
        bool finite = true;
        if (!parse_real(tv, v, finite)) sc.fail("bad value '" + printable(tv) + "' (expected a real number)");
        if (!finite) sc.fail("non-finite value '" + printable(tv) + "' (NaN, Inf or overflow)");
      }
    }
    if (std::string_view extra = sc.token(); !extra.empty())
      sc.fail("unexpected token '" + printable(extra) + "' after entry (" + std::to_string(i) + ", " +
              std::to_string(j) + ")" + (pattern ? " (a pattern file has no values)" : ""));
    e.rows.push_back(std::int32_t(i - 1));
    e.cols.push_back(std::int32_t(j - 1));
    e.vals.push_back(v);
    e.lines.push_back(sc.line());
    ++count;
  }
  while (sc.next_line())
    if (!sc.skippable())
      sc.fail("more entries than the " + std::to_string(nnz) + " declared on line " + std::to_string(size_line));

  const std::int32_t n32 = std::int32_t(n);
  CscMatrix32 A;
  if (symmetric) {
    A = detail::triplets_to_csc(n32, n32, e.rows, e.cols, e.vals, true, [&](std::size_t a, std::size_t b) {
      const std::size_t k1 = e.lines[a] <= e.lines[b] ? a : b, k2 = k1 == a ? b : a;
      sc.fail_at(e.lines[k1], "entry (" + std::to_string(e.rows[k1] + 1) + ", " + std::to_string(e.cols[k1] + 1) +
                                  ") is given again as (" + std::to_string(e.rows[k2] + 1) + ", " +
                                  std::to_string(e.cols[k2] + 1) + ") on " + name + ":" + std::to_string(e.lines[k2]) +
                                  "; a symmetric file stores each off-diagonal entry once, in either triangle "
                                  "(summing both would double it)");
    });
    for (std::int32_t j = 0; j < n32; ++j)
      for (std::int32_t p = A.col_ptr[j]; p < A.col_ptr[j + 1]; ++p)
        if (!std::isfinite(A.values[p]))
          throw Error(name + ": duplicate entries of (" + std::to_string(A.row_idx[p] + 1) + ", " +
                      std::to_string(j + 1) + ") sum to a non-finite value");
  } else {
    A = symmetrize_general(n32, e, opts.symmetry_tol, sc);
  }
  A.name = name;
  if (opts.insert_diagonal) add_missing_diagonal(A);
  return A;
}

}  // namespace

CscMatrix32 read_matrix_market(std::istream& in, const std::string& name, const ReadOptions& opts) {
  std::string data;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) data.append(buf, std::size_t(in.gcount()));
  if (in.bad()) throw Error(name + ": read error");
  if (is_gzip(data)) data = inflate_gzip(data, name);
  return parse(data, name, opts);
}

CscMatrix32 read_matrix_market(const std::string& path, const ReadOptions& opts) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw Error(path + ": cannot open: " + std::strerror(errno));
  std::string data;
  char buf[1 << 16];
  std::size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f.get())) > 0) data.append(buf, got);
  if (std::ferror(f.get())) throw Error(path + ": read error: " + std::strerror(errno));
  if (is_gzip(data)) data = inflate_gzip(data, path);
  return parse(data, path, opts);
}

}  // namespace stardiff::sparse
