// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/cloverleaf/deck.cpp — the clover.in reader (contract in deck.hpp).
#include "deck.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

namespace cloverleaf {
namespace {

struct Line {
  int no;
  std::vector<std::string> words;
};

std::string where(const std::string& name, int line) { return name + ":" + std::to_string(line) + ": "; }

// One deck line as CloverLeaf's parse_getline sees it: control characters blanked,
// comments cut at '!' or ';', lower case, '=' and ',' as blanks.
std::vector<std::string> split(std::string l) {
  for (char& c : l) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 32 || u > 128) c = ' ';
  }
  auto cut = l.find_first_of("!;");
  if (cut != std::string::npos) l.resize(cut);
  for (char& c : l) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    if (c == '=' || c == ',') c = ' ';
  }
  std::istringstream in(l);
  std::vector<std::string> w;
  std::string s;
  while (in >> s) w.push_back(s);
  return w;
}

class Parser {
 public:
  Parser(const std::string& name, const Line& l) : name_(name), l_(l) {}
  bool more() const { return pos_ < l_.words.size(); }
  const std::string& next() { return l_.words[pos_++]; }
  bool peek_number() const {
    if (!more()) return false;
    const std::string& s = l_.words[pos_];
    char* end = nullptr;
    std::strtod(s.c_str(), &end);
    return end != s.c_str() && *end == '\0';
  }
  std::string value(const std::string& key) {
    if (!more()) throw DeckError(where(name_, l_.no) + "'" + key + "' needs a value");
    return next();
  }
  double real(const std::string& key) {
    const std::string s = value(key);
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(s.c_str(), &end);
    // Fortran-style exponents (1.0d-3) are numbers too.
    std::string t = s;
    if (end != s.c_str() && (*end == 'd') ) {
      t[static_cast<std::size_t>(end - s.c_str())] = 'e';
      v = std::strtod(t.c_str(), &end);
      end = const_cast<char*>(s.c_str()) + (end - t.c_str());
    }
    if (end == s.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
      throw DeckError(where(name_, l_.no) + "'" + key + "' needs a number, got '" + s + "'");
    return v;
  }
  int integer(const std::string& key) {
    const std::string s = value(key);
    char* end = nullptr;
    errno = 0;
    long v = std::strtol(s.c_str(), &end, 10);
    if (end == s.c_str() || *end != '\0' || errno == ERANGE || v < INT_MIN || v > INT_MAX)
      throw DeckError(where(name_, l_.no) + "'" + key + "' needs an integer, got '" + s + "'");
    return static_cast<int>(v);
  }
  int line() const { return l_.no; }

 private:
  const std::string& name_;
  const Line& l_;
  std::size_t pos_ = 0;
};

}  // namespace

Deck parse_deck(const std::string& text, const std::string& name) {
  Deck d;
  d.path = name;
  std::vector<Line> lines;
  {
    std::istringstream in(text);
    std::string raw;
    int no = 0, begin = 0, end = 0;
    while (std::getline(in, raw)) {
      ++no;
      auto w = split(raw);
      if (w.empty()) continue;
      if (!begin) {
        if (w[0] == "*clover") begin = no;
        continue;
      }
      if (w[0] == "*endclover") {
        end = no;
        break;
      }
      if (w[0][0] == '*') throw DeckError(where(name, no) + "unexpected section '" + w[0] + "' inside *clover");
      lines.push_back({no, std::move(w)});
    }
    if (!begin) throw DeckError(name + ": no '*clover' line (not a CloverLeaf deck)");
    if (!end) throw DeckError(where(name, no) + "the deck ends without '*endclover' (*clover at line " +
                              std::to_string(begin) + ")");
    lines.push_back({end, {}});  // the *endclover line, for "missing key" messages
  }
  const int end_line = lines.back().no;
  lines.pop_back();

  std::map<std::string, int> seen;  // required keys -> line
  std::map<int, State> states;
  std::map<int, std::pair<bool, bool>> has_de;  // state -> (density given, energy given)
  std::map<int, bool> has_radius;
  for (const Line& l : lines) {
    Parser p(name, l);
    while (p.more()) {
      const std::string key = p.next();
      if (key == "initial_timestep") d.dtinit = p.real(key);
      else if (key == "max_timestep") d.dtmax = p.real(key);
      else if (key == "timestep_rise") d.dtrise = p.real(key);
      else if (key == "end_time") d.end_time = p.real(key), seen[key] = l.no;
      else if (key == "end_step") d.end_step = p.integer(key), seen[key] = l.no;
      else if (key == "xmin") d.xmin = p.real(key), seen[key] = l.no;
      else if (key == "xmax") d.xmax = p.real(key), seen[key] = l.no;
      else if (key == "ymin") d.ymin = p.real(key), seen[key] = l.no;
      else if (key == "ymax") d.ymax = p.real(key), seen[key] = l.no;
      else if (key == "x_cells") d.x_cells = p.integer(key), seen[key] = l.no;
      else if (key == "y_cells") d.y_cells = p.integer(key), seen[key] = l.no;
      else if (key == "visit_frequency") d.visit_frequency = p.integer(key);
      else if (key == "summary_frequency") d.summary_frequency = p.integer(key), seen[key] = l.no;
      else if (key == "tiles_per_chunk" || key == "tiles_per_problem") d.tiles_per_chunk = p.integer(key);
      else if (key == "test_problem") d.test_problem = p.integer(key);
      else if (key == "profiler_on") d.profiler_on = true;
      else if (key == "use_fortran_kernels" || key == "use_c_kernels" || key == "use_oa_kernels") {
        // kernel flavour of the reference: accepted, one implementation here
      } else if (key == "state") {
        const int s = p.integer(key);
        if (s < 1) throw DeckError(where(name, l.no) + "state index must be >= 1, got " + std::to_string(s));
        if (s > kMaxStates)
          throw DeckError(where(name, l.no) + "state " + std::to_string(s) + ": at most " +
                          std::to_string(kMaxStates) + " states are supported");
        if (states.count(s))
          throw DeckError(where(name, l.no) + "state " + std::to_string(s) + " defined twice (first at line " +
                          std::to_string(states[s].line) + ")");
        State st;
        st.line = l.no;
        auto& de = has_de[s];
        while (p.more()) {
          const std::string k = p.next();
          if (k == "density") st.density = p.real(k), de.first = true;
          else if (k == "energy") st.energy = p.real(k), de.second = true;
          else if (k == "xvel") st.xvel = p.real(k);
          else if (k == "yvel") st.yvel = p.real(k);
          else if (k == "xmin") st.xmin = p.real(k);
          else if (k == "xmax") st.xmax = p.real(k);
          else if (k == "ymin") st.ymin = p.real(k);
          else if (k == "ymax") st.ymax = p.real(k);
          else if (k == "radius") st.radius = p.real(k), has_radius[s] = true;
          else if (k == "geometry") {
            const std::string g = p.value(k);
            if (g == "rectangle") st.geometry = Geometry::Rectangle;
            else if (g == "circle") st.geometry = Geometry::Circle;
            else if (g == "point") st.geometry = Geometry::Point;
            else
              throw DeckError(where(name, l.no) + "state " + std::to_string(s) + ": geometry '" + g +
                              "' is not rectangle, circle or point");
          } else {
            throw DeckError(where(name, l.no) + "state " + std::to_string(s) + ": unknown state key '" + k + "'");
          }
        }
        states[s] = st;
      } else {
        d.warnings.push_back(where(name, l.no) + "unknown key '" + key + "' ignored");
        if (p.peek_number()) p.next();
      }
    }
  }

  for (const char* k : {"x_cells", "y_cells", "xmin", "xmax", "ymin", "ymax"})
    if (!seen.count(k)) throw DeckError(where(name, end_line) + "required key '" + k + "' missing before *endclover");
  auto at = [&](const char* k) { return seen.count(k) ? seen[k] : end_line; };
  if (d.x_cells <= 0) throw DeckError(where(name, at("x_cells")) + "x_cells must be > 0, got " + std::to_string(d.x_cells));
  if (d.y_cells <= 0) throw DeckError(where(name, at("y_cells")) + "y_cells must be > 0, got " + std::to_string(d.y_cells));
  if (!(d.xmax > d.xmin)) throw DeckError(where(name, at("xmax")) + "xmax must be > xmin");
  if (!(d.ymax > d.ymin)) throw DeckError(where(name, at("ymax")) + "ymax must be > ymin");
  if (!(d.end_time > 0)) throw DeckError(where(name, at("end_time")) + "end_time must be > 0");
  if (d.end_step <= 0) throw DeckError(where(name, at("end_step")) + "end_step must be > 0");
  if (!(d.dtinit > 0) || !(d.dtmax > 0) || !(d.dtrise > 0))
    throw DeckError(where(name, end_line) + "initial_timestep, max_timestep and timestep_rise must be > 0");
  if (d.summary_frequency < 0)
    throw DeckError(where(name, at("summary_frequency")) + "summary_frequency must be >= 0");
  if (d.visit_frequency < 0) throw DeckError(where(name, end_line) + "visit_frequency must be >= 0");
  if (d.tiles_per_chunk < 1) d.tiles_per_chunk = 1;

  if (states.empty()) throw DeckError(where(name, end_line) + "no states defined (state 1 is the background)");
  const int nstates = states.rbegin()->first;
  for (int s = 1; s <= nstates; ++s)
    if (!states.count(s))
      throw DeckError(where(name, states.rbegin()->second.line) + "state " + std::to_string(s) +
                      " is missing (states must be numbered 1.." + std::to_string(nstates) + ")");
  for (auto& [s, st] : states) {
    const std::string who = where(name, st.line) + "state " + std::to_string(s) + ": ";
    if (!has_de[s].first) throw DeckError(who + "no density");
    if (!has_de[s].second) throw DeckError(who + "no energy");
    if (!(st.density > 0)) throw DeckError(who + "density must be > 0");
    if (s == 1 && st.geometry != Geometry::None)
      throw DeckError(who + "state 1 is the background and must not have a geometry");
    if (s > 1 && st.geometry == Geometry::None) throw DeckError(who + "no geometry (rectangle, circle or point)");
    if (st.geometry == Geometry::Rectangle && (!(st.xmax > st.xmin) || !(st.ymax > st.ymin)))
      throw DeckError(who + "a rectangle needs xmax > xmin and ymax > ymin");
    if (st.geometry == Geometry::Circle && !(st.radius > 0)) throw DeckError(who + "a circle needs radius > 0");
    d.states.push_back(st);
  }
  // CloverLeaf shrinks every state but the background by a hundredth of a cell.
  const double dx = (d.xmax - d.xmin) / static_cast<float>(d.x_cells);
  const double dy = (d.ymax - d.ymin) / static_cast<float>(d.y_cells);
  for (std::size_t n = 1; n < d.states.size(); ++n) {
    State& st = d.states[n];
    st.xmin = st.xmin + (dx / 100.0);
    st.ymin = st.ymin + (dy / 100.0);
    st.xmax = st.xmax - (dx / 100.0);
    st.ymax = st.ymax - (dy / 100.0);
  }
  return d;
}

Deck read_deck(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DeckError(path + ": cannot open the deck");
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw DeckError(path + ": read error");
  return parse_deck(s.str(), path);
}

}  // namespace cloverleaf
