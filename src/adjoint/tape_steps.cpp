// SPDX-License-Identifier: LGPL-2.1-or-later
// src/adjoint/tape_steps.cpp — time steps, snapshots and the checkpointed reverse sweep
// (Tape::step, set_checkpointing; see tape.hpp).
#include <algorithm>
#include <string>

#include "adjoint/tape_internal.hpp"
#include "stardiff/adjoint/tape.hpp"
#include "stardiff/mesh/par_loop.hpp"
#include "starpu/mesh/cl_halo.hpp"

namespace stardiff {

using mesh::LoopArgDesc;

Checkpointing Checkpointing::revolve(std::int64_t steps, int snapshots) {
  require(steps >= 1, "Checkpointing::revolve: the step count must be positive (got " + std::to_string(steps) + ")");
  require(snapshots >= 1,
          "Checkpointing::revolve: the snapshot count must be positive (got " + std::to_string(snapshots) + ")");
  Checkpointing c;
  c.kind = Kind::Revolve;
  c.steps = steps;
  c.snapshots = snapshots;
  return c;
}

Checkpointing Checkpointing::revolve_exact(std::int64_t steps, int snapshots) {
  Checkpointing c = revolve(steps, snapshots);
  c.exact = true;
  return c;
}

Checkpointing Checkpointing::online(int snapshots) {
  require(snapshots >= 1,
          "Checkpointing::online: the snapshot count must be positive (got " + std::to_string(snapshots) + ")");
  Checkpointing c;
  c.kind = Kind::Online;
  c.snapshots = snapshots;
  return c;
}

std::string Checkpointing::describe() const {
  switch (kind) {
    case Kind::SaveAll: return "save-all";
    case Kind::Revolve: return "revolve(" + std::to_string(steps) + ", " + std::to_string(snapshots) + ")";
    case Kind::Online: return "online(" + std::to_string(snapshots) + ")";
  }
  return "?";
}

void Tape::reset_schedule() {
  sched_.reset();
  tentative_.reset();
  if (ckpt_.kind == Checkpointing::Kind::Revolve) sched_ = CheckpointSchedule::offline(ckpt_.steps, ckpt_.snapshots);
  if (ckpt_.kind == Checkpointing::Kind::Online) sched_ = CheckpointSchedule::online(ckpt_.snapshots);
}

void Tape::set_checkpointing(const Checkpointing& c) {
  require(c.kind == Checkpointing::Kind::SaveAll || c.snapshots >= 1,
          "Tape::set_checkpointing: the snapshot count must be positive (got " + std::to_string(c.snapshots) + ")");
  require(c.kind != Checkpointing::Kind::Revolve || c.steps >= 1,
          "Tape::set_checkpointing: the step count must be positive (got " + std::to_string(c.steps) + ")");
  require(nodes_.empty() && boundaries_ == 0 && !reversed_,
          "Tape::set_checkpointing: tape '" + name_ + "' has recorded already (set the strategy before start(), or "
          "clear() it)");
  ckpt_ = c;
  reset_schedule();
}

void Tape::note_bytes() {
  peak_snap_bytes_ = std::max(peak_snap_bytes_, snap_bytes_);
  peak_bytes_ = std::max(peak_bytes_, bytes_ + pool_bytes_ + snap_bytes_);
}

int Tape::snapshots_held() const {
  int n = displaced_ ? 1 : 0;
  for (auto& s : slots_) n += s ? 1 : 0;
  return n;
}

std::size_t Tape::nodes_end(std::int64_t k) const {
  const auto i = static_cast<std::size_t>(k) + 1;
  return i < step_begin_.size() ? step_begin_[i] : nodes_.size();
}

std::size_t Tape::snapshot_size() const {
  std::size_t n = 0;
  for (auto* d : state_)
    for (int t = 0; t < d->tiles(); ++t) {
      const BufferView v = d->tile(t).host_view();
      n += v.count() * v.elemsize;
    }
  return n;
}

mesh::Checkpoint whole_tile_checkpoint(mesh::DatBase& d, int t, const std::string& name) {
  const BufferView v = d.tile(t).host_view();
  mesh::Checkpoint c;
  c.dat = &d;
  c.tile = t;
  c.bytes = v.count() * v.elemsize;
  c.buffer = std::make_unique<Handle>(Handle::managed_vector(c.bytes, 1, name));
  c.buffer->set_owner(d.tile(t).owner());  // StarPU-MPI: the snapshot stays on the tile's rank
  return c;
}

std::unique_ptr<Tape::Snapshot> Tape::new_snapshot() {
  if (!free_snaps_.empty()) {
    auto s = std::move(free_snaps_.back());
    free_snaps_.pop_back();
    return s;
  }
  auto s = std::make_unique<Snapshot>();
  const std::string id = std::to_string(snap_bytes_ / std::max<std::size_t>(snapshot_size(), 1));
  for (auto* d : state_)
    for (int t = 0; t < d->tiles(); ++t) {
      mesh::Checkpoint c =
          whole_tile_checkpoint(*d, t, name_ + ":snapshot" + id + "_" + d->name() + "[" + std::to_string(t) + "]");
      snap_bytes_ += c.bytes;
      s->parts.push_back(std::move(c));
    }
  note_bytes();
  return s;
}

void Tape::take_snapshot(int slot, bool tentative) {
  if (slot >= static_cast<int>(slots_.size())) slots_.resize(slot + 1);
  std::unique_ptr<Snapshot>& cur = slots_[slot];
  if (tentative) {
    displaced_ = std::move(cur);  // kept until the boundary is confirmed
    tentative_slot_ = slot;
  }
  if (!cur) cur = new_snapshot();
  Executor& ex = state_.front()->block().executor();
  for (auto& c : cur->parts)
    codelets::insert_rows_copy(ex, c.dat->tile(c.tile), 0, *c.buffer, 0, c.bytes, true,
                               name_ + ":snapshot_" + c.dat->name());
}

void Tape::restore_snapshot(int slot) {
  require(slot >= 0 && slot < static_cast<int>(slots_.size()) && slots_[slot],
          "Tape::reverse: tape '" + name_ + "': the schedule restores snapshot slot " + std::to_string(slot) +
              ", which holds nothing");
  Executor& ex = state_.front()->block().executor();
  for (auto& c : slots_[slot]->parts) {
    codelets::insert_rows_copy(ex, *c.buffer, 0, c.dat->tile(c.tile), 0, c.bytes, true,
                               name_ + ":restore_snapshot_" + c.dat->name());
    c.dat->mark_written();
  }
}

void Tape::release_saves(std::size_t first, std::size_t last) {
  for (std::size_t i = first; i < last; ++i) {
    bytes_ -= nodes_[i]->kept_bytes();
    nodes_[i]->release_kept();
    for (auto& c : nodes_[i]->saves) {
      bytes_ -= c.bytes;
      pool_bytes_ += c.bytes;
      c.dat = nullptr;
      pool_.push_back(std::move(c));
    }
    nodes_[i]->saves.clear();
  }
}

void Tape::drop_tentative() {
  if (tentative_slot_ >= 0) {
    free_snaps_.push_back(std::move(slots_[tentative_slot_]));
    slots_[tentative_slot_] = std::move(displaced_);
    tentative_slot_ = -1;
  }
  displaced_.reset();
  tentative_.reset();
  pending_taped_ = false;
}

// Confirms that step boundaries_-1 ran (a boundary follows it).
void Tape::commit_boundary() {
  const std::int64_t k = static_cast<std::int64_t>(boundaries_) - 1;
  if (!tentative_)
    throw Error("Tape::step: tape '" + name_ + "' is checkpointed with " + ckpt_.describe() + ": step " +
                std::to_string(k) + " is beyond the " + std::to_string(ckpt_.steps) + " steps declared");
  sched_ = std::move(tentative_);
  tentative_.reset();
  if (displaced_) free_snaps_.push_back(std::move(displaced_));
  tentative_slot_ = -1;
  if (pending_taped_) {
    firstturn_ = k;
  } else {
    release_saves(step_begin_[k], nodes_.size());
    ++recomputed_;
    // Step k is recomputed (taped) just before its adjoint runs: its adjoints read the
    // values of that recomputation, never what later steps' saves restore.
    reads_.clear();
  }
  pending_taped_ = false;
}

void Tape::step(const std::vector<std::reference_wrapper<mesh::DatBase>>& state) {
  const std::string who = "Tape::step (tape '" + name_ + "', boundary " + std::to_string(boundaries_) + ")";
  require(!reversed_, who + ": the tape was reversed; clear() it before recording again");
  require(recording(), who + ": the tape is not recording (start() it first)");
  check_alive(who);
  if (boundaries_ == 0) {
    require(!state.empty(), who + ": the first call names the state dats (step({u, ...}))");
    mesh::Block* b = &state.front().get().block();
    std::vector<mesh::DatBase*> named;  // checked whole before the tape keeps any of it
    for (auto& r : state) {
      mesh::DatBase& d = r.get();
      require(&d.block() == b, who + ": dat '" + d.name() + "' belongs to block '" + d.block().name() +
                                   "', but dat '" + state.front().get().name() + "' to block '" + b->name() +
                                   "' (the state lives on one block)");
      if (std::find(named.begin(), named.end(), &d) == named.end()) named.push_back(&d);
    }
    state_ = std::move(named);
    for (auto* d : state_) see(d);
  } else if (!state.empty()) {
    std::vector<mesh::DatBase*> s;
    for (auto& r : state)
      if (std::find(s.begin(), s.end(), &r.get()) == s.end()) s.push_back(&r.get());
    bool same = s.size() == state_.size();
    for (auto* d : s) same = same && std::find(state_.begin(), state_.end(), d) != state_.end();
    if (!same) {
      std::string names;
      for (auto* d : state_) names += (names.empty() ? "'" : ", '") + d->name() + "'";
      throw Error(who + ": the state differs from the one the first call named (" + names + ")");
    }
  }
  if (checkpointed()) {
    if (boundaries_ > 0) commit_boundary();
    const auto kb = static_cast<std::int64_t>(boundaries_);
    if (sched_->is_online() || kb < sched_->steps()) {
      tentative_ = *sched_;
      for (const Action& a : tentative_->forward_boundary(kb)) {
        if (a.kind == ActionKind::TakeSnapshot) take_snapshot(a.slot, true);
        if (a.kind == ActionKind::FirstTurn) pending_taped_ = true;
      }
    }
  }
  step_begin_.push_back(nodes_.size());
  ++boundaries_;
}

// Runs step k again from the current state: untaped (tape false), or taped (its writes saved).
void Tape::recompute_step(std::int64_t k, bool tape) {
  for (std::size_t i = step_begin_[k]; i < nodes_end(k); ++i) {
    mesh::RecordedLoop& n = *nodes_[i];
    Executor& ex = n.block->executor();
    for (std::size_t j = 0; j < n.args.size(); ++j) {
      const LoopArgDesc& a = n.args[j];
      if (tape && a.writes() && a.save) save_dat(n, a);
      if (a.kind == LoopArgDesc::Kind::Reduce)  // the whole record: MIN/MAX restart with their arg too
        codelets::insert_rows_copy(ex, *n.red_pre[j], 0, a.red->value_handle(), 0, a.red->record_bytes(), true,
                                   n.name + ":" + a.red->name() + "_restart");
    }
    if (tape) {
      const std::size_t before = n.kept_bytes();
      n.submit_primal();
      bytes_ += n.kept_bytes() - before;
    } else {
      n.submit_primal_untaped();
    }
  }
  note_bytes();
}

void Tape::reverse_checkpointed() {
  drop_tentative();  // the loops after the latest boundary are the tail
  const auto L = static_cast<std::int64_t>(boundaries_) - 1;
  sched_->finish(L);
  // Reductions get back their end-of-forward values afterwards.
  std::vector<std::shared_ptr<Handle>>& kept = kept_;
  kept.clear();
  for (auto* r : reds_) {
    kept.push_back(r->make_like(r->name() + "_final"));
    codelets::insert_rows_copy(r->block().executor(), r->value_handle(), 0, *kept.back(), 0, r->record_bytes(),
                               true, r->name() + "_keep");
  }
  reverse_nodes(step_begin_[L], nodes_.size());
  if (firstturn_ >= 0) {
    reverse_nodes(step_begin_[firstturn_], nodes_end(firstturn_));
    release_saves(step_begin_[firstturn_], nodes_end(firstturn_));
  }
  for (;;) {
    const Action a = sched_->next();
    if (a.kind == ActionKind::Terminate) break;
    switch (a.kind) {
      case ActionKind::TakeSnapshot: take_snapshot(a.slot, false); break;
      case ActionKind::RestoreSnapshot: restore_snapshot(a.slot); break;
      case ActionKind::Advance:
        for (std::int64_t k = a.step; k < a.to; ++k) recompute_step(k, false);
        recomputed_ += a.to - a.step;
        break;
      case ActionKind::FirstTurn:
      case ActionKind::YouTurn:
        recompute_step(a.step, true);
        reverse_nodes(step_begin_[a.step], nodes_end(a.step));
        release_saves(step_begin_[a.step], nodes_end(a.step));
        break;
      case ActionKind::Terminate: break;
    }
  }
  reverse_nodes(0, step_begin_[0]);  // the prefix
  for (std::size_t i = 0; i < reds_.size(); ++i)
    codelets::insert_rows_copy(reds_[i]->block().executor(), *kept[i], 0, reds_[i]->value_handle(), 0,
                               reds_[i]->record_bytes(), true, reds_[i]->name() + "_final");
}

void Tape::clear_steps() {
  drop_tentative();
  state_.clear();
  step_begin_.clear();
  boundaries_ = 0;
  firstturn_ = -1;
  slots_.clear();
  free_snaps_.clear();
  pool_.clear();
  kept_.clear();
  pool_bytes_ = snap_bytes_ = peak_snap_bytes_ = peak_bytes_ = 0;
  recomputed_ = 0;
  reset_schedule();
}

}  // namespace stardiff
