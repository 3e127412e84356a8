// SPDX-License-Identifier: LGPL-2.1-or-later
// src/runtime/recording_executor.cpp — records the submitted task graph.
//
// Edges follow StarPU's implicit rules per handle: a reader depends on the last
// writer; a writer depends on the last writer and every reader since; consecutive
// RW|COMMUTE (or REDUX) accesses form a group that depends on what came before it.
#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "stardiff/runtime/executor.hpp"

namespace stardiff {

void RecordingExecutor::submit(const Codelet& cl, std::span<const DataAccess> data, const void* args,
                               std::size_t args_size, const TaskOptions& opts) {
  Task t;
  t.codelet = cl.name();
  t.name = opts.name.empty() ? cl.name() : opts.name;
  t.cost = opts.cost;
  t.span = opts.span;
  t.fork_join = cl.parallelism() == Parallelism::ForkJoin;
  for (const auto& d : data) {
    if (d.handle == nullptr || !d.handle->valid())
      throw Error("task '" + t.name + "': empty handle");
    t.accesses.emplace_back(static_cast<const void*>(d.handle->impl()), d.mode);
  }
  if (inner_) inner_->submit(cl, data, args, args_size, opts);
  tasks_.push_back(std::move(t));
}

void RecordingExecutor::wait_all() {
  if (inner_) inner_->wait_all();
}

std::map<std::string, std::size_t> RecordingExecutor::counts() const {
  std::map<std::string, std::size_t> c;
  for (const auto& t : tasks_) ++c[t.codelet];
  return c;
}

std::vector<std::pair<std::size_t, std::size_t>> RecordingExecutor::edges() const {
  struct State {
    std::vector<std::size_t> last_writers;  // a group when commuting
    std::vector<std::size_t> readers;
    std::vector<std::size_t> group_preds;  // what the current commuting group waits for
    bool group_commute = false;
  };
  std::map<const void*, State> st;
  std::set<std::pair<std::size_t, std::size_t>> e;
  for (std::size_t j = 0; j < tasks_.size(); ++j) {
    for (auto [h, mode] : tasks_[j].accesses) {
      auto& s = st[h];
      bool group = has(mode, Access::COMMUTE) || mode == Access::REDUX;
      if (mode == Access::R) {
        for (auto w : s.last_writers) e.insert({w, j});
        s.readers.push_back(j);
      } else if (group && s.group_commute && s.readers.empty()) {
        // joins the current commuting group: same predecessors as the group
        for (auto p : s.group_preds) e.insert({p, j});
        s.last_writers.push_back(j);
      } else {
        std::vector<std::size_t> preds = s.last_writers;
        preds.insert(preds.end(), s.readers.begin(), s.readers.end());
        for (auto p : preds) e.insert({p, j});
        s.group_preds = std::move(preds);
        s.last_writers = {j};
        s.readers.clear();
        s.group_commute = group;
      }
    }
  }
  return {e.begin(), e.end()};
}

RecordingExecutor::CriticalPath RecordingExecutor::critical_path(int width) const {
  if (width < 1) throw Error("RecordingExecutor::critical_path: width must be >= 1, got " + std::to_string(width));
  const std::size_t n = tasks_.size();
  CriticalPath cp;
  std::vector<double> weight(n), finish(n);
  std::vector<std::size_t> pred(n, n);
  for (std::size_t j = 0; j < n; ++j) {
    const Task& t = tasks_[j];
    weight[j] = t.fork_join ? std::max(t.cost / width, t.span) : t.cost;
    finish[j] = weight[j];
    cp.work += t.cost;
  }
  // edges are sorted by (i, j), i < j: finish[i] is final before any edge out of i is read
  for (auto [i, j] : edges())
    if (finish[i] + weight[j] > finish[j]) {
      finish[j] = finish[i] + weight[j];
      pred[j] = i;
    }
  std::size_t last = n;
  for (std::size_t j = 0; j < n; ++j)
    if (last == n || finish[j] > finish[last]) last = j;
  if (last == n) return cp;
  cp.length = finish[last];
  for (std::size_t k = last; k != n; k = pred[k]) cp.path.push_back(k);
  std::reverse(cp.path.begin(), cp.path.end());
  return cp;
}

std::string RecordingExecutor::to_dot() const {
  std::ostringstream s;
  s << "digraph stardiff {\n  node [shape=box];\n";
  for (std::size_t i = 0; i < tasks_.size(); ++i)
    s << "  t" << i << " [label=\"" << tasks_[i].name << "\\n" << tasks_[i].codelet << "\"];\n";
  for (auto [a, b] : edges()) s << "  t" << a << " -> t" << b << ";\n";
  s << "}\n";
  return s.str();
}

void RecordingExecutor::write_dot(const std::string& path) const {
  std::ofstream f(path);
  if (!f) throw Error("cannot write DOT file '" + path + "'");
  f << to_dot();
}

}  // namespace stardiff
