#include "runtime/train/ps_workload.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "common/file.h"

namespace paddle::runtime {

void PsWorkload::begin(bool initialize_dense, std::optional<int64_t> passes_done) {
  passes_ended_ = passes_done.value_or(config_.ps.start_pass);
  if (fleet_.worker_index() == 0 && config_.ps.init_dir.empty() && initialize_dense)
    fleet_.parameter_store().init_dense(0, initial_dense());
  fleet_.ps_barrier();  // everyone starts from the initialized parameters
  step_ = make_ps_step(fleet_, trained_tables(), config_.lr_schedule.base_lr);
}

void PsWorkload::save_final(const CheckpointPosition&) {
  common::write_file_atomically(std::filesystem::path(config_.output_dir) / "dense.json",
                                nlohmann::json(fleet_.parameter_store().pull_dense(0)).dump() + "\n");
}

void PsWorkload::end_epoch() {
  step_->flush();
  const int64_t every = config_.ps.sparse.shrink_every_passes;
  if (every <= 0 || ++passes_ended_ % every != 0) return;
  fleet_.ps_barrier();  // no worker pushes while the tables shrink
  if (fleet_.worker_index() == 0)
    for (const ps::ShrinkReport& report : fleet_.shrink()) fmt::print("shrink (every {} passes): {}\n", every, ps::describe(report));
  std::fflush(stdout);
  fleet_.ps_barrier();
}

PsValues PsWorkload::fetch(std::vector<std::vector<uint64_t>> keys) {
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
  const auto start = std::chrono::steady_clock::now();
  step_->apply(std::move(grads));
  communication_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace paddle::runtime
