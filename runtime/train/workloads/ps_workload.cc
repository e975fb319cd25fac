#include "runtime/train/workloads/ps_workload.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "common/file.h"

namespace paddle::runtime {

void PsWorkload::begin(bool initialize_dense) {
  if (fleet_.worker_index() == 0 && config_.ps.init_dir.empty() && initialize_dense)
    fleet_.parameter_store().init_dense(0, initial_dense());
  fleet_.ps_barrier();  // everyone starts from the initialized parameters
  step_ = make_ps_step(fleet_, trained_tables(), config_.lr_schedule.base_lr);
}

void PsWorkload::begin_in_place(const WorkerMark& at) {
  resume_ = at;
  last_mark_ = at;
  step_ = make_ps_step(fleet_, trained_tables(), config_.lr_schedule.base_lr);
}

void PsWorkload::mark_progress(int64_t round, int64_t trained, int64_t step, bool round_trained) {
  // Kept without a progress file too: the evaluation's flags are the round's (evaluation_counted()).
  if (!step_) throw std::logic_error("PsWorkload::mark_progress before begin()");
  const uint64_t acknowledged = step_->acknowledged_steps();
  if (round != marked_round_) {
    marked_round_ = round;
    round_first_batch_ = trained;
    round_first_step_ = step;
    round_first_acknowledged_ = acknowledged;
  }
  const int64_t done = std::min(trained, round_first_batch_ + static_cast<int64_t>(acknowledged - round_first_acknowledged_));
  WorkerMark mark;
  mark.round = round;
  mark.batch = done;
  mark.step = round_first_step_ + (done - round_first_batch_);
  // The barriers passed over were completed: they count as the job's.
  mark.barriers = fleet_.server_control().barriers_completed() - fleet_.barriers_to_pass();
  mark.round_trained = round_trained;
  mark.barrier_per_step = fleet_.strategy().ps.mode == PsMode::kSync;
  if (round == last_mark_.round) {  // the round as far as it went (a dead self's too)
    mark.round_trained = round_trained || last_mark_.round_trained;
    mark.counted = last_mark_.counted;
    mark.zeroed = last_mark_.zeroed;
  }
  last_mark_ = mark;
  if (progress_ != nullptr) progress_->record(mark);
}

void PsWorkload::note_evaluation_counted() {
  last_mark_.counted = true;
  if (progress_ != nullptr) progress_->record(last_mark_);
}

void PsWorkload::note_finished() {
  last_mark_.finished = true;
  if (progress_ != nullptr) progress_->record(last_mark_);
}

void PsWorkload::note_evaluation_zeroed() {
  last_mark_.zeroed = true;
  if (progress_ != nullptr) progress_->record(last_mark_);
}

void PsWorkload::save_final(const CheckpointPosition&) {
  common::write_file_atomically(std::filesystem::path(config_.output_dir) / "dense.json",
                                nlohmann::json(fleet_.parameter_store().pull_dense(0)).dump() + "\n");
}

void PsWorkload::end_round() { step_->flush(); }

PsValues PsWorkload::fetch(std::vector<std::vector<uint64_t>> keys) {
  common::ProgressPage::Scope pulling(fleet_.progress(), common::Phase::kPsPull);
  const auto start = std::chrono::steady_clock::now();
  PsValues values = step_->fetch(std::move(keys));
  communication_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return values;
}

void PsWorkload::prefetch(const std::vector<std::vector<uint64_t>>& keys) {
  const auto start = std::chrono::steady_clock::now();
  step_->prefetch(keys);
  communication_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void PsWorkload::apply(PsValues grads) {
  common::ProgressPage::Scope pushing(fleet_.progress(), common::Phase::kPsPush);
  const auto start = std::chrono::steady_clock::now();
  step_->apply(std::move(grads));
  communication_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace paddle::runtime
