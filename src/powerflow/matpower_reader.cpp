// SPDX-License-Identifier: LGPL-2.1-or-later
// src/powerflow/matpower_reader.cpp — MATPOWER case-file parser (see powerflow/matpower.hpp).
//
// A small MATLAB-subset scanner: statements `NAME.FIELD = VALUE;`, VALUE a numeric matrix
// `[...]`, a cell array `{...}` (skipped), a string or a number. `%` starts a comment outside
// quotes, `...` continues a line. Every row of a numeric matrix remembers its source line so
// that semantic checks can name FILE:LINE. Input quoted in a message goes through
// quote_input (cut to 40 bytes, non-printable bytes as \xHH); a path that cannot be read
// (a directory, say) is an Error with the system's reason.
#include "stardiff/powerflow/matpower.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <queue>
#include <unordered_map>

#include "core/quote.hpp"
#include "stardiff/runtime/error.hpp"

namespace stardiff::powerflow {
namespace {

struct Matrix {
  std::vector<std::vector<double>> rows;
  std::vector<int> lines;
  int line = 0;  // line of `mpc.X = [`
  bool present = false;
};

std::string fmt_num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

class Scanner {
 public:
  Scanner(std::string_view text, std::string file) : s_(text), file_(std::move(file)) {}

  [[noreturn]] void fail(int line, const std::string& msg) const {
    throw Error(file_ + ":" + std::to_string(line) + ": " + msg);
  }

  // Parses the whole file into the fields the power flow needs.
  void run() {
    for (;;) {
      skip_blank(true);
      if (eof()) break;
      char c = s_[p_];
      if (c == ';' || c == ',') { ++p_; continue; }
      if (!is_ident_start(c)) fail(line_, "unexpected character '" + detail::quote_input(std::string_view(&c, 1)) + "' at top level");
      int stmt_line = line_;
      std::string id = ident();
      if (id == "function") { skip_to_eol(); continue; }
      if (id == "end" || id == "return" || id == "endfunction") continue;
      auto dot = id.find('.');
      if (dot == std::string::npos) fail(stmt_line, "unsupported statement '" + detail::quote_input(id) + "' (expected NAME.FIELD = ...)");
      std::string field = id.substr(dot + 1);
      skip_blank(false);
      if (eof() || s_[p_] != '=') fail(line_, "expected '=' after '" + detail::quote_input(id) + "'");
      ++p_;
      skip_blank(false);
      if (eof()) fail(line_, "missing value for '" + detail::quote_input(id) + "'");
      value(field, stmt_line);
    }
  }

  std::map<std::string, Matrix> matrices;  // bus, gen, branch, gencost
  std::string version;
  int version_line = 0;
  bool have_version = false;
  double base_mva = 0;
  int base_line = 0;
  bool have_base = false;

 private:
  bool eof() const { return p_ >= s_.size(); }
  static bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
  static bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

  std::string ident() {
    std::size_t b = p_;
    while (!eof() && is_ident(s_[p_])) ++p_;
    return std::string(s_.substr(b, p_ - b));
  }
  void skip_to_eol() {
    while (!eof() && s_[p_] != '\n') ++p_;
  }
  bool at_continuation() const { return s_.compare(p_, 3, "...") == 0; }
  // Skips spaces, comments and continuations; newlines too when `newlines`.
  void skip_blank(bool newlines) {
    while (!eof()) {
      char c = s_[p_];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') { ++p_; continue; }
      if (c == '%' || c == '#') { skip_to_eol(); continue; }
      if (c == '.' && at_continuation()) {
        skip_to_eol();
        if (!eof()) { ++p_; ++line_; }
        continue;
      }
      if (c == '\n' && newlines) { ++p_; ++line_; continue; }
      break;
    }
  }
  std::string quoted() {
    char q = s_[p_++];
    std::string out;
    for (;;) {
      if (eof() || s_[p_] == '\n') fail(line_, "unterminated string");
      char c = s_[p_++];
      if (c == q) {
        if (!eof() && s_[p_] == q) { out += q; ++p_; continue; }
        return out;
      }
      out += c;
    }
  }
  void end_statement() {
    skip_blank(false);
    if (!eof() && (s_[p_] == ';' || s_[p_] == ',')) ++p_;
    skip_blank(false);
    if (!eof() && s_[p_] != '\n') fail(line_, "unexpected text after statement");
  }

  void value(const std::string& field, int stmt_line) {
    char c = s_[p_];
    const bool needed = field == "bus" || field == "gen" || field == "branch" || field == "gencost";
    if (c == '[') {
      ++p_;
      if (needed) {
        Matrix& m = matrices[field];
        if (m.present) fail(stmt_line, "mpc." + field + " assigned twice");
        m.present = true;
        m.line = stmt_line;
        matrix(m, field);
      } else {
        skip_group('[', ']', stmt_line);
      }
    } else if (c == '{') {
      if (needed) fail(stmt_line, "mpc." + field + " must be a numeric matrix, not a cell array");
      ++p_;
      skip_group('{', '}', stmt_line);
    } else if (c == '\'' || c == '"') {
      std::string v = quoted();
      if (field == "version") { version = v; have_version = true; version_line = stmt_line; }
      else if (needed || field == "baseMVA") fail(stmt_line, "mpc." + field + " must be numeric");
    } else {
      std::size_t b = p_;
      while (!eof() && s_[p_] != ';' && s_[p_] != '\n' && s_[p_] != '%' && s_[p_] != ',') ++p_;
      std::string tok(s_.substr(b, p_ - b));
      while (!tok.empty() && std::isspace(static_cast<unsigned char>(tok.back()))) tok.pop_back();
      if (field == "baseMVA") {
        base_mva = number(tok, stmt_line, "mpc.baseMVA");
        have_base = true;
        base_line = stmt_line;
      } else if (field == "version") {
        version = tok; have_version = true; version_line = stmt_line;
      } else if (needed) {
        fail(stmt_line, "mpc." + field + " must be a matrix [ ... ]");
      }
    }
    end_statement();
  }

  double number(const std::string& tok, int line, const std::string& what) const {
    if (tok.empty()) fail(line, "empty value for " + what);
    const char* b = tok.c_str();
    char* e = nullptr;
    double v = std::strtod(b, &e);
    if (e == b || *e != '\0') fail(line, "non-numeric field '" + detail::quote_input(tok) + "' in " + what);
    if (std::isnan(v)) fail(line, "NaN in " + what);
    return v;
  }

  void matrix(Matrix& m, const std::string& field) {
    std::vector<double> row;
    int row_line = line_;
    auto end_row = [&] {
      if (!row.empty()) {
        m.rows.push_back(std::move(row));
        m.lines.push_back(row_line);
        row.clear();
      }
    };
    for (;;) {
      skip_blank(false);
      if (eof()) fail(m.line, "unterminated matrix mpc." + field + " (missing ']')");
      char c = s_[p_];
      if (c == ']') { ++p_; end_row(); break; }
      if (c == '\n') { ++p_; end_row(); ++line_; row_line = line_; continue; }
      if (c == ';') { ++p_; end_row(); row_line = line_; continue; }
      if (c == ',') { ++p_; continue; }
      if (row.empty()) row_line = line_;
      std::size_t b = p_;
      while (!eof()) {
        char d = s_[p_];
        if (d == ' ' || d == '\t' || d == '\r' || d == '\n' || d == ',' || d == ';' || d == ']' || d == '%') break;
        if (d == '.' && at_continuation()) break;
        ++p_;
      }
      std::string tok(s_.substr(b, p_ - b));
      row.push_back(number(tok, line_, "mpc." + field + " row " + std::to_string(m.rows.size() + 1) +
                                           " column " + std::to_string(row.size() + 1)));
    }
  }

  void skip_group(char open, char close, int stmt_line) {
    int depth = 1;
    while (depth > 0) {
      if (eof()) fail(stmt_line, std::string("unterminated '") + open + "' (missing '" + close + "')");
      char c = s_[p_];
      if (c == '\n') { ++line_; ++p_; continue; }
      if (c == '%') { skip_to_eol(); continue; }
      if (c == '.' && at_continuation()) { skip_to_eol(); continue; }
      if (c == '\'' || c == '"') {
        // A quote right after an identifier character or a closing bracket is a transpose.
        char prev = p_ > 0 ? s_[p_ - 1] : ' ';
        if (std::isalnum(static_cast<unsigned char>(prev)) || prev == ']' || prev == '}' || prev == ')' || prev == '_' || prev == '.') {
          ++p_;
          continue;
        }
        quoted();
        continue;
      }
      if (c == open) ++depth;
      else if (c == close) --depth;
      ++p_;
    }
  }

  std::string_view s_;
  std::string file_;
  std::size_t p_ = 0;
  int line_ = 1;
};

const char* const kBusCols[] = {"BUS_I", "BUS_TYPE", "PD", "QD", "GS", "BS", "BUS_AREA", "VM", "VA",
                               "BASE_KV", "ZONE", "VMAX", "VMIN"};
const char* const kGenCols[] = {"GEN_BUS", "PG", "QG", "QMAX", "QMIN", "VG", "MBASE", "GEN_STATUS", "PMAX", "PMIN"};
const char* const kBranchCols[] = {"F_BUS", "T_BUS", "BR_R", "BR_X", "BR_B", "RATE_A", "RATE_B", "RATE_C",
                                  "TAP", "SHIFT", "BR_STATUS"};

std::string stem(const std::string& path) {
  auto slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  auto dot = base.rfind('.');
  return dot == std::string::npos ? base : base.substr(0, dot);
}

}  // namespace

Case parse_matpower(std::string_view text, const std::string& file) {
  Scanner sc(text, file);
  sc.run();
  auto fail = [&](int line, const std::string& msg) { sc.fail(line, msg); };

  if (!sc.have_version) fail(1, "missing mpc.version (expected '2')");
  if (sc.version != "2") fail(sc.version_line, "unsupported mpc.version '" + detail::quote_input(sc.version) + "' (expected '2')");
  if (!sc.have_base) fail(1, "missing mpc.baseMVA");
  if (!(std::isfinite(sc.base_mva) && sc.base_mva > 0))
    fail(sc.base_line, "mpc.baseMVA must be a positive finite number, got " + fmt_num(sc.base_mva));

  struct Need { const char* name; std::size_t min_cols; const char* const* cols; };
  const Need needs[] = {{"bus", 13, kBusCols}, {"gen", 10, kGenCols}, {"branch", 11, kBranchCols}};
  for (const auto& n : needs) {
    auto it = sc.matrices.find(n.name);
    if (it == sc.matrices.end()) fail(1, std::string("missing section mpc.") + n.name);
    const Matrix& m = it->second;
    if (m.rows.empty() && std::string(n.name) == "bus") fail(m.line, "mpc.bus is empty");
    for (std::size_t r = 0; r < m.rows.size(); ++r) {
      if (m.rows[r].size() != m.rows[0].size())
        fail(m.lines[r], std::string("mpc.") + n.name + " row " + std::to_string(r + 1) + " has " +
                             std::to_string(m.rows[r].size()) + " columns, row 1 has " + std::to_string(m.rows[0].size()));
      if (m.rows[r].size() < n.min_cols)
        fail(m.lines[r], std::string("mpc.") + n.name + " row " + std::to_string(r + 1) + " has " +
                             std::to_string(m.rows[r].size()) + " columns, at least " + std::to_string(n.min_cols) +
                             " required");
    }
  }
  if (auto it = sc.matrices.find("gencost"); it != sc.matrices.end()) {
    const Matrix& m = it->second;
    for (std::size_t r = 0; r < m.rows.size(); ++r)
      if (m.rows[r].size() < 4) fail(m.lines[r], "mpc.gencost row " + std::to_string(r + 1) + " has fewer than 4 columns");
  }

  const Matrix& B = sc.matrices["bus"];
  const Matrix& G = sc.matrices["gen"];
  const Matrix& L = sc.matrices["branch"];
  Case c;
  c.file = file;
  c.name = stem(file);
  c.base_mva = sc.base_mva;
  c.gen_rows = G.rows.size();
  c.branch_rows = L.rows.size();
  if (auto it = sc.matrices.find("gencost"); it != sc.matrices.end()) c.gencost_rows = it->second.rows.size();

  auto is_int = [](double v) { return std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.0e15; };
  auto require_finite = [&](const Matrix& m, std::size_t r, std::size_t col, const char* table, const char* const* names) {
    double v = m.rows[r][col];
    if (!std::isfinite(v))
      fail(m.lines[r], std::string("mpc.") + table + " row " + std::to_string(r + 1) + ": " + names[col] +
                           " must be finite, got " + fmt_num(v));
    return v;
  };

  // Buses.
  std::unordered_map<std::int64_t, int> index;
  index.reserve(B.rows.size() * 2);
  int nref = 0;
  for (std::size_t r = 0; r < B.rows.size(); ++r) {
    const auto& row = B.rows[r];
    for (std::size_t k = 0; k <= 8; ++k) require_finite(B, r, k, "bus", kBusCols);
    if (!is_int(row[0]) || row[0] <= 0)
      fail(B.lines[r], "mpc.bus row " + std::to_string(r + 1) + ": bus number must be a positive integer, got " + fmt_num(row[0]));
    if (!is_int(row[1]) || row[1] < 1 || row[1] > 4)
      fail(B.lines[r], "mpc.bus row " + std::to_string(r + 1) + ": bus type must be 1, 2, 3 or 4, got " + fmt_num(row[1]));
    Bus b;
    b.id = static_cast<std::int64_t>(row[0]);
    b.type = static_cast<int>(row[1]);
    b.pd = row[2]; b.qd = row[3]; b.gs = row[4]; b.bs = row[5]; b.vm = row[7]; b.va = row[8];
    b.line = B.lines[r];
    auto [it, inserted] = index.emplace(b.id, static_cast<int>(r));
    if (!inserted)
      fail(B.lines[r], "duplicate bus number " + std::to_string(b.id) + " (first at line " +
                           std::to_string(c.buses[it->second].line) + ")");
    if (b.type == REF) {
      if (++nref > 1)
        fail(B.lines[r], "second reference bus (type 3): bus " + std::to_string(b.id) + ", first is bus " +
                             std::to_string(c.buses[c.ref].id) + " at line " + std::to_string(c.buses[c.ref].line));
      c.ref = static_cast<int>(r);
    }
    c.buses.push_back(b);
  }
  if (nref == 0) fail(B.line, "no reference bus (type 3) in mpc.bus");
  auto bus_of = [&](const Matrix& m, std::size_t r, std::size_t col, const char* table, const char* const* names) {
    double v = m.rows[r][col];
    if (!is_int(v))
      fail(m.lines[r], std::string("mpc.") + table + " row " + std::to_string(r + 1) + ": " + names[col] +
                           " must be an integer bus number, got " + fmt_num(v));
    auto it = index.find(static_cast<std::int64_t>(v));
    if (it == index.end())
      fail(m.lines[r], std::string("mpc.") + table + " row " + std::to_string(r + 1) + ": " + names[col] + " " +
                           fmt_num(v) + " is not a bus in mpc.bus");
    return it->second;
  };

  // Generators: every row is checked, in-service ones at live buses kept.
  for (std::size_t r = 0; r < G.rows.size(); ++r) {
    const auto& row = G.rows[r];
    for (std::size_t k : {0, 1, 2, 5, 7}) require_finite(G, r, k, "gen", kGenCols);
    for (std::size_t k = 0; k < row.size(); ++k)
      if (std::isnan(row[k])) fail(G.lines[r], "NaN in mpc.gen row " + std::to_string(r + 1));
    Gen g;
    g.bus = bus_of(G, r, 0, "gen", kGenCols);
    g.pg = row[1]; g.qg = row[2]; g.qmax = row[3]; g.qmin = row[4]; g.vg = row[5];
    g.line = G.lines[r];
    g.row = static_cast<int>(r);
    if (row[7] > 0 && c.buses[g.bus].type != ISOLATED) c.gens.push_back(g);
    else ++c.gens_dropped;
  }

  // Branches.
  for (std::size_t r = 0; r < L.rows.size(); ++r) {
    const auto& row = L.rows[r];
    for (std::size_t k : {0, 1, 2, 3, 4, 8, 9, 10}) require_finite(L, r, k, "branch", kBranchCols);
    for (std::size_t k = 0; k < row.size(); ++k)
      if (std::isnan(row[k])) fail(L.lines[r], "NaN in mpc.branch row " + std::to_string(r + 1));
    Branch br;
    br.from = bus_of(L, r, 0, "branch", kBranchCols);
    br.to = bus_of(L, r, 1, "branch", kBranchCols);
    br.r = row[2]; br.x = row[3]; br.b = row[4]; br.ratio = row[8]; br.angle = row[9];
    br.line = L.lines[r];
    bool on = row[10] != 0 && c.buses[br.from].type != ISOLATED && c.buses[br.to].type != ISOLATED;
    if (!on) { ++c.branches_dropped; continue; }
    if (br.r == 0 && br.x == 0)
      fail(br.line, "mpc.branch row " + std::to_string(r + 1) + " (" + std::to_string(c.buses[br.from].id) + " - " +
                        std::to_string(c.buses[br.to].id) + "): zero impedance (r = x = 0)");
    c.branches.push_back(br);
  }
  for (const auto& m : {std::make_pair("mpc.gencost", "gencost")}) {
    auto it = sc.matrices.find(m.second);
    if (it == sc.matrices.end()) continue;
    for (std::size_t r = 0; r < it->second.rows.size(); ++r)
      for (double v : it->second.rows[r])
        if (std::isnan(v)) fail(it->second.lines[r], std::string("NaN in ") + m.first);
  }
  if (c.buses[c.ref].type == ISOLATED) fail(c.buses[c.ref].line, "reference bus is isolated");

  // Islands: every live bus must reach the reference bus.
  const int nb = static_cast<int>(c.buses.size());
  std::vector<int> deg(nb + 1, 0);
  for (const auto& br : c.branches) { ++deg[br.from + 1]; ++deg[br.to + 1]; }
  for (int i = 0; i < nb; ++i) deg[i + 1] += deg[i];
  std::vector<int> adj(deg[nb]);
  std::vector<int> fill(deg.begin(), deg.end() - 1);
  for (const auto& br : c.branches) { adj[fill[br.from]++] = br.to; adj[fill[br.to]++] = br.from; }
  std::vector<char> seen(nb, 0);
  std::vector<int> queue{c.ref};
  seen[c.ref] = 1;
  for (std::size_t q = 0; q < queue.size(); ++q)
    for (int k = deg[queue[q]]; k < deg[queue[q] + 1]; ++k)
      if (!seen[adj[k]]) { seen[adj[k]] = 1; queue.push_back(adj[k]); }
  for (int i = 0; i < nb; ++i)
    if (!seen[i] && c.buses[i].type != ISOLATED)
      fail(c.buses[i].line, "bus " + std::to_string(c.buses[i].id) + " is not connected to the reference bus " +
                                std::to_string(c.buses[c.ref].id) + " through in-service branches (island)");
  return c;
}

Case read_matpower(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw Error(path + ": cannot open MATPOWER case file: " + std::strerror(errno));
  std::string text;
  char buf[1 << 16];
  std::size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f.get())) > 0) text.append(buf, got);
  if (std::ferror(f.get())) throw Error(path + ": read error: " + std::strerror(errno));
  return parse_matpower(text, path);
}

}  // namespace stardiff::powerflow
