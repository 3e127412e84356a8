// SPDX-License-Identifier: LGPL-2.1-or-later
// src/mesh/par_loop.cpp — argument checks, tile ranges and halo decisions of par_loop.
#include "stardiff/mesh/par_loop.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

namespace stardiff::mesh {

const char* to_string(Mode m) {
  switch (m) {
    case Mode::Read: return "READ";
    case Mode::Write: return "WRITE";
    case Mode::RW: return "RW";
    case Mode::Inc: return "INC";
  }
  return "?";
}

namespace {
Recorder* g_recorder = nullptr;
std::atomic<bool> g_nan_check{false};
}  // namespace

Recorder* active_recorder() { return g_recorder; }
void set_active_recorder(Recorder* r) { g_recorder = r; }
namespace {
thread_local const char* t_running_external = nullptr;
}
const char* running_external() { return t_running_external; }
void set_running_external(const char* name) { t_running_external = name; }
void set_nan_check(bool on) { g_nan_check = on; }
bool nan_check() { return g_nan_check; }

void Tracked::link(Recorder* r) {
  if (std::find(recs_.begin(), recs_.end(), r) == recs_.end()) recs_.push_back(r);
}
void Tracked::unlink(Recorder* r) { recs_.erase(std::remove(recs_.begin(), recs_.end(), r), recs_.end()); }
void Tracked::notify_destroyed(const std::string& what) {
  auto recs = std::move(recs_);
  recs_.clear();
  for (Recorder* r : recs) r->forget(this, what);
}
void Tracked::require_adjoint_ready(const std::string& what) const {
  for (const Recorder* r : recs_)
    require(!r->awaiting_reverse(), what + ": adjoint read before tape '" + r->name() +
                                        "', which recorded it, was reversed (seed and reverse() it first)");
}

namespace detail {

void check_range(const std::string& loop, const Block& block, const Range& range) {
  if (const char* ext = running_external())
    throw Error("external function '" + std::string(ext) + "' submitted par_loop '" + loop +
                "' from inside its task (undeclared access)");
  for (int d = block.dims(); d < 3; ++d)
    require(range.lo[d] == 0 && range.hi[d] == 1,
            "par_loop '" + loop + "': range " + range.str(3) + " has bounds in dimension " + std::to_string(d) +
                " but block '" + block.name() + "' is " + std::to_string(block.dims()) + "-D");
  for (int d = 0; d < block.dims(); ++d)
    require(range.lo[d] <= range.hi[d], "par_loop '" + loop + "': range " + range.str(block.dims()) +
                                            " is reversed in dimension " + std::to_string(d));
}

void check_dat_arg(const std::string& loop, int argi, const Block& block, const Range& range, const DatBase& dat,
                   const Stencil& st, Mode mode) {
  const std::string who = "par_loop '" + loop + "': argument " + std::to_string(argi) + " (dat '" + dat.name() +
                          "', " + to_string(mode) + ")";
  require(&dat.block() == &block, who + " belongs to block '" + dat.block().name() + "', the loop runs over '" +
                                      block.name() + "'");
  require(st.dims() == block.dims(), who + ": stencil '" + st.name() + "' is " + std::to_string(st.dims()) +
                                         "-D, the block " + std::to_string(block.dims()) + "-D");
  if (mode != Mode::Read && !st.is_zero())
    throw Error(who + ": written with a non-zero stencil '" + st.name() +
                "' (only READ arguments may use offsets)");
  if (range.points(block.dims()) == 0) return;
  for (int d = 0; d < block.dims(); ++d) {
    if (!dat.has_axis(d)) {
      if (mode != Mode::Read && range.hi[d] - range.lo[d] != 1)
        throw Error(who + ": the dat lacks dimension " + std::to_string(d) + " (it is read broadcast there), so " +
                    "only a loop whose range is one index in that dimension may write it; range " +
                    range.str(block.dims()) + " is not");
      continue;
    }
    if (range.lo[d] + st.min(d) < dat.first(d) || range.hi[d] - 1 + st.max(d) >= dat.last(d)) {
      bool in_range = range.lo[d] >= dat.first(d) && range.hi[d] <= dat.last(d);
      throw Error(who + ": " +
                  (in_range ? "stencil offsets [" + std::to_string(st.min(d)) + "," + std::to_string(st.max(d)) +
                                  "] read outside the dat's halo"
                            : std::string("range ") + range.str(block.dims()) + " lies outside the dat") +
                  " in dimension " + std::to_string(d) + " (valid indices [" + std::to_string(dat.first(d)) + "," +
                  std::to_string(dat.last(d)) + "), halo depths " + std::to_string(dat.d_m(d)) + "/" +
                  std::to_string(dat.d_p(d)) + ")");
    }
  }
}

void check_distribution(const std::string& loop, const std::vector<LoopArgDesc>& args) {
  const DatBase* first = nullptr;
  int fi = 0, i = 0;
  for (const auto& a : args) {
    if (a.kind == LoopArgDesc::Kind::Dat && a.dat->tiled()) {
      if (!first) {
        first = a.dat;
        fi = i;
      } else if (a.dat->owners() != first->owners()) {
        auto str = [](const std::vector<int>& v) {
          std::string s;
          for (int r : v) s += (s.empty() ? "" : ",") + std::to_string(r);
          return "{" + s + "}";
        };
        throw Error("par_loop '" + loop + "': argument " + std::to_string(i) + " (dat '" + a.dat->name() +
                    "') is distributed over ranks " + str(a.dat->owners()) + " but argument " + std::to_string(fi) +
                    " (dat '" + first->name() + "') over " + str(first->owners()) +
                    ": the tiles of one loop must have the same owners");
      }
    }
    ++i;
  }
}

bool tile_range(const Block& block, const Range& range, int t, int lo[3], int hi[3]) {
  const int o = block.outer();
  for (int d = 0; d < 3; ++d) {
    lo[d] = range.lo[d];
    hi[d] = range.hi[d];
  }
  if (t > 0) lo[o] = std::max(lo[o], block.bound(t));
  if (t < block.tiles() - 1) hi[o] = std::min(hi[o], block.bound(t + 1));
  for (int d = 0; d < 3; ++d)
    if (lo[d] >= hi[d]) return false;
  return true;
}

std::string adjoint_signature(const std::vector<LoopArgDesc>& args) {
  std::string s;
  int i = 0;
  for (const auto& a : args) {
    if (!s.empty()) s += ", ";
    switch (a.kind) {
      case LoopArgDesc::Kind::Dat:
        s += "Acc<const T> " + a.dat->name();
        if (a.dat->active()) s += ", Acc<T> " + a.dat->name() + "_a1s";
        break;
      case LoopArgDesc::Kind::Gbl: s += "const T* gbl" + std::to_string(i); break;
      case LoopArgDesc::Kind::Reduce: s += "const T* " + a.red->name() + ", const T* " + a.red->name() + "_a1s"; break;
      case LoopArgDesc::Kind::Idx: s += "const int* idx"; break;
      case LoopArgDesc::Kind::Scalar:
        s += "const T* " + a.scalar->name() + ", T* " + a.scalar->name() + "_a1s";
        break;
    }
    ++i;
  }
  return s;
}

unsigned activity_mask(const std::vector<LoopArgDesc>& args) {
  unsigned m = 0, k = 0;
  for (const auto& a : args)
    if (a.kind == LoopArgDesc::Kind::Dat) {
      if (a.dat->active()) m |= 1u << k;
      ++k;
    }
  return m;
}

bool loop_is_active(const std::vector<LoopArgDesc>& args) {
  for (const auto& a : args)
    if ((a.kind == LoopArgDesc::Kind::Dat && a.dat->active()) || a.kind == LoopArgDesc::Kind::Reduce ||
        a.kind == LoopArgDesc::Kind::Scalar)
      return true;
  return false;
}

bool all_unit(const std::vector<LoopArgDesc>& args) {
  for (const auto& a : args)
    if (a.kind == LoopArgDesc::Kind::Dat && a.dat->dim() != 1) return false;
  return true;
}

DataAccess adjoint_access(DatBase& dat, Mode mode, int t, bool& clear) {
  clear = mode == Mode::Read && !dat.tiled();
  return clear ? out(dat.adjoint_partial(t)) : inout(dat.adjoint_tile(t));
}

void sum_adjoint_partials(const std::vector<LoopArgDesc>& args, const std::vector<int>& ran,
                          const std::string& loop) {
  std::vector<DatBase*> done;
  for (const auto& a : args)
    if (a.kind == LoopArgDesc::Kind::Dat && a.mode == Mode::Read && a.dat->active() && !a.dat->tiled() &&
        std::find(done.begin(), done.end(), a.dat) == done.end()) {
      a.dat->sum_adjoint_partials(ran, loop);
      done.push_back(a.dat);
    }
}

void exchange_for(const std::vector<LoopArgDesc>& args, bool only_adjoint_reads) {
  for (const auto& a : args) {
    if (a.kind != LoopArgDesc::Kind::Dat || a.mode != Mode::Read) continue;
    if (only_adjoint_reads && !a.adjoint_reads) continue;
    const int o = a.dat->dims() - 1;
    if (a.st_min[o] != 0 || a.st_max[o] != 0) a.dat->exchange_halos();
  }
}

}  // namespace detail
}  // namespace stardiff::mesh

namespace stardiff::mesh {
namespace {
bool env_switch(const char* name, bool dflt) {
  const char* e = std::getenv(name);
  if (e == nullptr || *e == '\0') return dflt;
  return std::strcmp(e, "0") != 0;
}
std::atomic<bool> g_stream_stores{env_switch("STARDIFF_STREAM_STORES", false)};
std::atomic<bool> g_huge_pages{env_switch("STARDIFF_HUGE_PAGES", true)};
}  // namespace
void set_stream_stores(bool on) { g_stream_stores = on; }
bool stream_stores() { return g_stream_stores; }
void set_huge_pages(bool on) { g_huge_pages = on; }
bool huge_pages() { return g_huge_pages; }
}  // namespace stardiff::mesh

namespace stardiff::mesh::detail {
bool stream_worthwhile(const int lo[3], const int hi[3]) {
  if (!stream_stores()) return false;
  long long pts = 1;
  for (int d = 0; d < 3; ++d) pts *= hi[d] - lo[d];
  return pts * 8 >= (8LL << 20);  // >= 8 MiB written per output: past the caches
}
}  // namespace stardiff::mesh::detail
