// SPDX-License-Identifier: LGPL-2.1-or-later
// src/sparse/ldlt_plan.cpp — the task plan of the sparse LDL^T factorization.
//
// Contract: plan_tasks() cuts the assembly tree (postorder) into tasks (see "Plan" in
// ldlt_internal.hpp): one task for everything when S.single_task; otherwise small subtrees
// (below subtree_flops, or an automatic threshold) grouped with adjacent ones up to that
// threshold, each supernode above them its own task or joining the chain of small
// supernodes below it, and large supernodes (split_flops, enough columns and rows for
// windows) marked for panel/update tasks. Then each task's dependencies: the tasks owning
// its supernodes' children, in child order. Deterministic.
#include <algorithm>
#include <vector>

#include "sparse/ldlt_internal.hpp"

namespace stardiff::sparse::detail {

void plan_tasks(const LdltOptions& opts, Symbolic& S) {
  const int ns = S.ns;
  S.task_lo.clear();
  S.task_hi.clear();
  // A supernode split into panel/update tasks: enough work, columns and rows for windows.
  const auto is_big = [&](int s) {
    const int ncol = S.sn_first[s + 1] - S.sn_first[s];
    const int m0 = ncol + int(S.row_ptr[s + 1] - S.row_ptr[s]);
    return opts.split_flops > 0 && S.sn_flops[s] >= opts.split_flops && ncol >= 2 * opts.block_size &&
           m0 >= 8 * opts.block_size;
  };
  if (S.single_task) {
    if (ns > 0) {
      S.task_lo.push_back(0);
      S.task_hi.push_back(ns - 1);
    }
  } else {
    std::vector<double> sub(ns, 0);
    std::vector<int> lo(ns);
    for (int s = 0; s < ns; ++s) {
      sub[s] += S.sn_flops[s];
      lo[s] = s;
      for (int k = S.child_ptr[s]; k < S.child_ptr[s + 1]; ++k) lo[s] = std::min(lo[s], lo[S.child_list[k]]);
      if (S.sn_parent[s] != -1) sub[S.sn_parent[s]] += sub[s];
    }
    const double thresh = opts.subtree_flops > 0 ? opts.subtree_flops
                                                 : std::clamp(S.flops / 64.0, 1e7, 5e7);
    std::vector<char> grouped(ns, 0);
    for (int s = ns - 1; s >= 0; --s) {  // top-down
      int q = S.sn_parent[s];
      if (q != -1 && grouped[q]) {
        grouped[s] = 1;  // inside a group
        continue;
      }
      if (sub[s] <= thresh) {
        grouped[s] = 2;  // group root
      }
    }
    // emit in postorder of roots; a supernode above the groups joins the task of its last
    // child (s - 1) when that task is a chain of such supernodes with little work (the
    // parent needs the child anyway; only overlap of that small work with siblings is lost)
    double chain_flops = 0, group_flops = 0;
    bool chain_open = false, group_open = false;
    for (int s = 0; s < ns; ++s) {
      if (grouped[s] == 1) continue;
      if (grouped[s] == 2) {
        // adjacent small subtrees (siblings or cousins) share a task up to the threshold
        if (group_open && S.task_hi.back() == lo[s] - 1 && group_flops + sub[s] <= thresh) {
          S.task_hi.back() = s;
          group_flops += sub[s];
        } else {
          S.task_lo.push_back(lo[s]);
          S.task_hi.push_back(s);
          group_open = true;
          group_flops = sub[s];
        }
        chain_open = false;
        continue;
      }
      group_open = false;
      const bool big = is_big(s);
      if (chain_open && !big && S.task_hi.back() == s - 1 && S.sn_parent[s - 1] == s &&
          chain_flops < thresh / 4) {
        S.task_hi.back() = s;
        chain_flops += S.sn_flops[s];
        continue;
      }
      S.task_lo.push_back(s);
      S.task_hi.push_back(s);
      chain_open = !big;
      chain_flops = S.sn_flops[s];
    }
  }
  const int nt = int(S.task_lo.size());
  S.task_split.assign(nt, 0);
  if (!S.single_task)  // a big supernode never joins a chain, so it is alone in its task
    for (int t = 0; t < nt; ++t) S.task_split[t] = S.task_hi[t] == S.task_lo[t] && is_big(S.task_lo[t]);
  std::vector<int> node2task(ns, -1);
  for (int t = 0; t < nt; ++t)
    for (int s = S.task_lo[t]; s <= S.task_hi[t]; ++s) node2task[s] = t;
  S.dep_ptr.assign(nt + 1, 0);
  S.dep_list.clear();
  for (int t = 0; t < nt; ++t) {
    for (int s = S.task_lo[t]; s <= S.task_hi[t]; ++s)
      for (int k = S.child_ptr[s]; k < S.child_ptr[s + 1]; ++k) {
        int ct = node2task[S.child_list[k]];
        if (ct != t) S.dep_list.push_back(ct);
      }
    S.dep_ptr[t + 1] = int(S.dep_list.size());
  }
}

}  // namespace stardiff::sparse::detail
