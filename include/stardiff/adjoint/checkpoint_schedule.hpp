// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/adjoint/checkpoint_schedule.hpp — time-step checkpointing schedules (pure algorithm).
//
// Contract:
//  * Steps are 0..l-1; step k maps state x_k to x_{k+1}. A schedule is a sequence of Actions
//    (Griewank & Walther's revolve): TakeSnapshot{step,slot} stores x_step in slot (replacing
//    what the slot held), Advance{step,to} runs steps [step,to) untaped, RestoreSnapshot{step,slot}
//    makes x_step current, FirstTurn{step} / YouTurn{step} tape step `step` from the current
//    state and reverse it at once, Terminate ends. Steps are reversed l-1, ..., 0, each once.
//  * offline(l, s): binomial checkpointing with s slots (x_0 takes one); its Advance total equals
//    optimal_recomputations(l, s) = t*l - beta(s+1, t-1), t minimal with beta(s,t) = C(s+t,s) >= l.
//  * online(s): the step count is unknown; the forward pass is one Advance per step until
//    finish(l); every boundary is stored, over the snapshot whose loss costs least were the run
//    to end there (greedy on the reversal cost below; x_0 is kept).
//  * finish(l') ends the forward pass after l' steps, all run untaped (l' < l adapts the offline
//    schedule); the reversal then restores the held snapshots last to first and reverses each
//    segment with an offline schedule on the slots still free. l' > l, s <= 0, l <= 0: Error.
//  * recomputed() counts every step run untaped so far, the first pass included (revolve's advance).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace stardiff {

enum class ActionKind { TakeSnapshot, Advance, RestoreSnapshot, FirstTurn, YouTurn, Terminate };

struct Action {
  ActionKind kind = ActionKind::Terminate;
  std::int64_t step = 0;  // snapshot / restore / turn step; first step of an Advance
  std::int64_t to = 0;    // Advance: one past the last step run
  int slot = -1;          // TakeSnapshot / RestoreSnapshot

  bool operator==(const Action&) const = default;
};

std::string to_string(const Action& a);

class CheckpointSchedule {
 public:
  // Totals of a whole schedule (what was run so far plus the rest).
  struct Totals {
    std::int64_t recomputed = 0;
    int peak_snapshots = 0;
    std::int64_t actions = 0;
  };

  static CheckpointSchedule offline(std::int64_t steps, int snapshots);
  static CheckpointSchedule online(int snapshots);

  // Next action; after Terminate it keeps returning Terminate.
  Action next();
  // The remaining actions, Terminate included. Online: only after finish().
  std::vector<Action> all();
  // For a driver called at each step boundary k = 0, 1, ... in order, before step k runs: the
  // actions to do there (TakeSnapshot{k}, then FirstTurn{k} when k is the last declared step:
  // tape step k); empty means run step k untaped. k >= the declared steps: Error.
  std::vector<Action> forward_boundary(std::int64_t k);
  // The forward pass ended after `steps` steps run untaped (between the start and the end of
  // the last Advance handed out). Offline: steps <= declared (Error otherwise); after the
  // FirstTurn only steps == declared is allowed (no-op).
  void finish(std::int64_t steps);

  bool is_online() const { return online_; }
  bool finished() const { return finished_; }
  // Declared step count (offline), the actual one after finish(), -1 while online and running.
  std::int64_t steps() const { return steps_; }
  int snapshots() const { return static_cast<int>(slot_step_.size()); }
  std::int64_t recomputed() const { return advanced_; }
  int snapshots_held() const { return held_; }
  int peak_snapshots() const { return peak_held_; }
  // Totals of the whole schedule; needs the step count (offline, or online after finish()).
  Totals totals() const;

  // beta(s, t) = C(s+t, s), saturated at INT64_MAX.
  static std::int64_t beta(std::int64_t s, std::int64_t t);
  // Minimal t with beta(s, t) >= steps.
  static std::int64_t repetition_number(std::int64_t steps, int snapshots);
  // t*l - beta(s+1, t-1): revolve's advance count for l steps and s snapshots.
  static std::int64_t optimal_recomputations(std::int64_t steps, int snapshots);

 private:
  struct Task {
    enum Kind { Reverse, Release } kind;
    std::int64_t a = 0, b = 0;  // Reverse: steps [a, b) with x_a in `slot`
    int slot = -1;
    bool first = false;  // the last step of this range is revolve's firsturn
    bool at_a = false;   // x_a is the current state (no restore needed)
  };
  CheckpointSchedule() = default;
  void expand(const Task& t);
  Action online_forward();
  void take(std::int64_t step, int slot);
  void push_segments(std::int64_t end);
  std::int64_t split(std::int64_t l, int s) const;

  bool online_ = false;
  bool finished_ = false;    // the forward pass is over (turned, or finish() called)
  bool terminated_ = false;
  bool finish_called_ = false;
  std::int64_t steps_ = -1;
  std::vector<std::int64_t> slot_step_;  // step held by each slot, -1 free
  std::vector<int> pool_;                // free slots
  std::vector<Task> stack_;
  std::vector<Action> queue_;  // emitted actions in reverse order (back is next)
  std::int64_t advanced_ = 0;
  int held_ = 0, peak_held_ = 0;
  std::int64_t returned_ = 0;
  // Forward pass bookkeeping: the driver is between fwd_lo_ and fwd_hi_.
  std::int64_t fwd_lo_ = 0, fwd_hi_ = 0;
  std::int64_t boundary_ = 0;  // next boundary forward_boundary expects
  // Online: step stored in each slot, and the next online boundary.
  std::vector<std::int64_t> online_step_;
  std::int64_t online_pos_ = 0;
  bool online_advance_due_ = false;
};

// The online strategy run for `steps` steps with `snapshots` slots, against offline revolve.
struct OnlineQuality {
  std::int64_t online = 0;   // online recomputations (forward pass included)
  std::int64_t offline = 0;  // optimal_recomputations(steps, snapshots)
  double ratio = 1.0;        // online / offline (1 when offline is 0 and online is 0)
};
OnlineQuality online_vs_offline(std::int64_t steps, int snapshots);

}  // namespace stardiff
