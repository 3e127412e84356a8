// SPDX-License-Identifier: LGPL-2.1-or-later
// src/adjoint/checkpoint_schedule.cpp — offline binomial (revolve), adapted and online schedules.
//
// The offline schedule reverses [a,b) with x_a held and s slots by advancing m steps, storing x_{a+m},
// reversing [a+m,b) with s-1 slots, then [a,a+m) with s; m minimises m + P(m,s) + P(b-a-m,s-1), a
// convex function of m (P is convex in l with slope t), whose minimum is the binomial optimum.
#include "stardiff/adjoint/checkpoint_schedule.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "stardiff/runtime/error.hpp"

namespace stardiff {

namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

Action make(ActionKind k, std::int64_t step, std::int64_t to = 0, int slot = -1) {
  Action a;
  a.kind = k;
  a.step = step;
  a.to = to;
  a.slot = slot;
  return a;
}

}  // namespace

std::string to_string(const Action& a) {
  const std::string s = std::to_string(a.step);
  switch (a.kind) {
    case ActionKind::TakeSnapshot: return "TakeSnapshot{" + s + ", slot " + std::to_string(a.slot) + "}";
    case ActionKind::Advance: return "Advance{" + s + ", " + std::to_string(a.to) + "}";
    case ActionKind::RestoreSnapshot: return "RestoreSnapshot{" + s + ", slot " + std::to_string(a.slot) + "}";
    case ActionKind::FirstTurn: return "FirstTurn{" + s + "}";
    case ActionKind::YouTurn: return "YouTurn{" + s + "}";
    case ActionKind::Terminate: return "Terminate";
  }
  return "?";
}

std::int64_t CheckpointSchedule::beta(std::int64_t s, std::int64_t t) {
  if (s < 0 || t < 0) return 0;
  __int128 b = 1;  // C(s+j, j) for j = 0..t
  for (std::int64_t j = 1; j <= t; ++j) {
    b = b * (s + j) / j;
    if (b >= kMax) return kMax;
  }
  return static_cast<std::int64_t>(b);
}

std::int64_t CheckpointSchedule::repetition_number(std::int64_t steps, int snapshots) {
  require(steps >= 1, "checkpoint schedule: the step count must be positive (got " + std::to_string(steps) + ")");
  require(snapshots >= 1,
          "checkpoint schedule: the snapshot count must be positive (got " + std::to_string(snapshots) + ")");
  if (snapshots == 1) return steps - 1;  // beta(1, t) = t + 1
  std::int64_t t = 0;
  __int128 b = 1;
  while (b < steps) {
    ++t;
    b = b * (snapshots + t) / t;
  }
  return t;
}

std::int64_t CheckpointSchedule::optimal_recomputations(std::int64_t steps, int snapshots) {
  const std::int64_t t = repetition_number(steps, snapshots);
  // beta(s+1, t-1) = sum_{j<t} beta(s, j), each term below l.
  __int128 sum = 0, b = 1;
  for (std::int64_t j = 0; j < t; ++j) {
    sum += b;
    b = b * (snapshots + j + 1) / (j + 1);
  }
  const __int128 r = static_cast<__int128>(t) * steps - sum;
  require(r <= kMax, "checkpoint schedule: the recomputation count of " + std::to_string(steps) + " steps on " +
                         std::to_string(snapshots) + " snapshots overflows 64 bits");
  return static_cast<std::int64_t>(r);
}

CheckpointSchedule CheckpointSchedule::offline(std::int64_t steps, int snapshots) {
  require(steps >= 1, "CheckpointSchedule::offline: the step count must be positive (got " + std::to_string(steps) +
                          ")");
  require(snapshots >= 1, "CheckpointSchedule::offline: the snapshot count must be positive (got " +
                              std::to_string(snapshots) + ")");
  (void)optimal_recomputations(steps, snapshots);  // overflow check
  CheckpointSchedule c;
  c.steps_ = steps;
  c.slot_step_.assign(snapshots, -1);
  for (int k = snapshots - 1; k >= 1; --k) c.pool_.push_back(k);
  c.stack_.push_back(Task{Task::Release, 0, 0, 0, false, false});
  c.stack_.push_back(Task{Task::Reverse, 0, steps, 0, true, true});
  c.queue_.push_back(make(ActionKind::TakeSnapshot, 0, 0, 0));
  return c;
}

CheckpointSchedule CheckpointSchedule::online(int snapshots) {
  require(snapshots >= 1, "CheckpointSchedule::online: the snapshot count must be positive (got " +
                              std::to_string(snapshots) + ")");
  CheckpointSchedule c;
  c.online_ = true;
  c.slot_step_.assign(snapshots, -1);
  c.online_step_.assign(snapshots, -1);
  return c;
}

std::int64_t CheckpointSchedule::split(std::int64_t l, int s) const {
  if (s <= 1) return l - 1;
  // First m in [1, l-2] with g(m+1) - g(m) = 1 + t_s(m+1) - t_{s-1}(l-m) >= 0, else l-1.
  std::int64_t lo = 1, hi = l - 1;
  while (lo < hi) {
    const std::int64_t m = lo + (hi - lo) / 2;
    const std::int64_t d = 1 + repetition_number(m + 1, s) - repetition_number(l - m, s - 1);
    if (d >= 0)
      hi = m;
    else
      lo = m + 1;
  }
  return lo;
}

void CheckpointSchedule::expand(const Task& t) {
  // queue_ holds actions in reverse order: collect in order, then reverse.
  std::vector<Action> out;
  const std::int64_t len = t.b - t.a;
  if (!t.at_a) out.push_back(make(ActionKind::RestoreSnapshot, t.a, 0, t.slot));
  if (len == 1) {
    out.push_back(make(t.first ? ActionKind::FirstTurn : ActionKind::YouTurn, t.a));
  } else {
    const std::int64_t m = split(len, 1 + static_cast<int>(pool_.size()));
    const std::int64_t c = t.a + m;
    out.push_back(make(ActionKind::Advance, t.a, c));
    stack_.push_back(Task{Task::Reverse, t.a, c, t.slot, false, false});
    if (t.b - c == 1) {
      out.push_back(make(t.first ? ActionKind::FirstTurn : ActionKind::YouTurn, c));
    } else {
      const int ns = pool_.back();
      pool_.pop_back();
      out.push_back(make(ActionKind::TakeSnapshot, c, 0, ns));
      stack_.push_back(Task{Task::Release, 0, 0, ns, false, false});
      stack_.push_back(Task{Task::Reverse, c, t.b, ns, t.first, true});
    }
  }
  queue_.insert(queue_.end(), out.rbegin(), out.rend());
}

Action CheckpointSchedule::online_forward() {
  // x_0 stays in slot 0; each boundary p >= 1 is stored, in a free slot or over the snapshot c_k
  // (k >= 1) whose loss costs least were the run to end after step p: segment j of the reversal has
  // s-j slots, so dropping c_k merges segments k-1 and k and gives each later segment one slot more.
  const std::int64_t p = online_pos_;
  std::vector<Action> out;
  const int s = static_cast<int>(online_step_.size());
  int slot = -1;
  if (p == 0) {
    slot = 0;
  } else if (s > 1) {
    for (int k = 1; k < s && slot < 0; ++k)
      if (online_step_[k] < 0) slot = k;
    if (slot < 0) {
      std::vector<int> order(s);  // slots by step: c_0 = 0 < c_1 < ... < c_{s-1} < p
      for (int k = 0; k < s; ++k) order[k] = k;
      std::sort(order.begin(), order.end(), [&](int x, int y) { return online_step_[x] < online_step_[y]; });
      auto c = [&](int k) { return k < s ? online_step_[order[k]] : p; };
      auto P = [](std::int64_t len, int slots) { return optimal_recomputations(len, slots); };
      std::vector<std::int64_t> pre(s + 1, 0), suf(s + 2, 0);  // pre[k]: j < k at s-j; suf[k]: j >= k at s-j+1
      for (int k = 0; k < s; ++k) pre[k + 1] = pre[k] + P(c(k + 1) - c(k), s - k);
      for (int k = s - 1; k >= 1; --k) suf[k] = suf[k + 1] + P(c(k + 1) - c(k), s - k + 1);
      std::int64_t best = -1;
      for (int k = 1; k < s; ++k) {
        const std::int64_t cost = pre[k - 1] + P(c(k + 1) - c(k - 1), s - k + 1) + suf[k + 1];
        if (best < 0 || cost < best) {
          best = cost;
          slot = order[k];
        }
      }
    }
  }
  if (slot >= 0) {
    online_step_[slot] = p;
    out.push_back(make(ActionKind::TakeSnapshot, p, 0, slot));
  }
  out.push_back(make(ActionKind::Advance, p, p + 1));
  ++online_pos_;
  queue_.insert(queue_.end(), out.rbegin(), out.rend());
  return queue_.back();
}

Action CheckpointSchedule::next() {
  if (terminated_) return make(ActionKind::Terminate, 0);
  while (queue_.empty()) {
    if (online_ && !finished_) {
      online_forward();
      break;
    }
    if (stack_.empty()) {
      queue_.push_back(make(ActionKind::Terminate, 0));
      break;
    }
    const Task t = stack_.back();
    stack_.pop_back();
    if (t.kind == Task::Release) {
      if (slot_step_[t.slot] >= 0) --held_;
      slot_step_[t.slot] = -1;
      pool_.push_back(t.slot);
      continue;
    }
    expand(t);
  }
  const Action a = queue_.back();
  queue_.pop_back();
  ++returned_;
  switch (a.kind) {
    case ActionKind::TakeSnapshot:
      if (slot_step_[a.slot] < 0) ++held_;
      slot_step_[a.slot] = a.step;
      peak_held_ = std::max(peak_held_, held_);
      if (!finished_) fwd_lo_ = fwd_hi_ = a.step;
      break;
    case ActionKind::Advance:
      advanced_ += a.to - a.step;
      if (!finished_) {
        fwd_lo_ = a.step;
        fwd_hi_ = a.to;
      }
      break;
    case ActionKind::FirstTurn:
    case ActionKind::YouTurn:
      finished_ = true;
      break;
    case ActionKind::RestoreSnapshot:
      break;
    case ActionKind::Terminate:
      terminated_ = true;
      break;
  }
  return a;
}

std::vector<Action> CheckpointSchedule::all() {
  require(!online_ || finished_, "CheckpointSchedule::all: an online schedule needs finish(steps) first");
  std::vector<Action> out;
  do out.push_back(next());
  while (out.back().kind != ActionKind::Terminate);
  return out;
}

std::vector<Action> CheckpointSchedule::forward_boundary(std::int64_t k) {
  if (!online_ && k >= steps_)
    throw Error("checkpoint schedule: step " + std::to_string(k) + " is beyond the " + std::to_string(steps_) +
                " steps declared (steps are 0.." + std::to_string(steps_ - 1) + ")");
  require(!finished_, "checkpoint schedule: forward_boundary(" + std::to_string(k) + ") after the forward pass ended");
  require(k == boundary_, "checkpoint schedule: forward_boundary(" + std::to_string(k) + ") out of order, expected " +
                              std::to_string(boundary_));
  ++boundary_;
  std::vector<Action> out;
  if (k < fwd_hi_) return out;  // inside an Advance handed out before
  for (;;) {
    const Action a = next();
    if (a.kind == ActionKind::Advance) return out;
    out.push_back(a);
    if (a.kind != ActionKind::TakeSnapshot) return out;  // FirstTurn
  }
}

void CheckpointSchedule::push_segments(std::int64_t end) {
  std::vector<std::pair<std::int64_t, int>> held;
  for (int k = 0; k < static_cast<int>(slot_step_.size()); ++k)
    if (slot_step_[k] >= 0) held.emplace_back(slot_step_[k], k);
  std::sort(held.begin(), held.end());
  for (std::size_t j = 0; j < held.size(); ++j) {
    const std::int64_t b = j + 1 < held.size() ? held[j + 1].first : end;
    stack_.push_back(Task{Task::Release, 0, 0, held[j].second, false, false});
    stack_.push_back(Task{Task::Reverse, held[j].first, b, held[j].second, false, false});
  }
}

void CheckpointSchedule::finish(std::int64_t steps) {
  const std::string who = "CheckpointSchedule::finish(" + std::to_string(steps) + "): ";
  require(steps >= 1, who + "the step count must be positive");
  if (!online_ && steps > steps_)
    throw Error(who + "more steps than the " + std::to_string(steps_) + " declared");
  require(!finish_called_, who + "finish was already called");
  if (finished_) {  // the offline firsturn ended the forward pass
    if (steps == steps_) return;
    throw Error(who + "the forward pass already ran the " + std::to_string(steps_) + " declared steps");
  }
  require(steps >= fwd_lo_ && steps <= fwd_hi_,
          who + "the forward pass handed out steps " + std::to_string(fwd_lo_) + ".." + std::to_string(fwd_hi_) +
              " as the current run");
  advanced_ -= fwd_hi_ - steps;
  steps_ = steps;
  finished_ = true;
  finish_called_ = true;
  stack_.clear();
  queue_.clear();
  pool_.clear();
  for (int k = static_cast<int>(slot_step_.size()) - 1; k >= 0; --k) {
    if (slot_step_[k] >= steps) {
      slot_step_[k] = -1;
      --held_;
    }
    if (slot_step_[k] < 0) pool_.push_back(k);
  }
  push_segments(steps);
}

CheckpointSchedule::Totals CheckpointSchedule::totals() const {
  require(!online_ || finished_, "CheckpointSchedule::totals: an online schedule needs finish(steps) first");
  CheckpointSchedule c = *this;
  while (c.next().kind != ActionKind::Terminate) {
  }
  return Totals{c.advanced_, c.peak_held_, c.returned_};
}

OnlineQuality online_vs_offline(std::int64_t steps, int snapshots) {
  OnlineQuality q;
  q.offline = CheckpointSchedule::optimal_recomputations(steps, snapshots);
  CheckpointSchedule c = CheckpointSchedule::online(snapshots);
  for (std::int64_t k = 0; k < steps; ++k) c.forward_boundary(k);
  c.finish(steps);
  q.online = c.totals().recomputed;
  q.ratio = q.offline > 0 ? static_cast<double>(q.online) / static_cast<double>(q.offline)
                          : (q.online == 0 ? 1.0 : std::numeric_limits<double>::infinity());
  return q;
}

}  // namespace stardiff
