#include "runtime/train/ps_workload.h"

#include <chrono>
#include <filesystem>

#include "common/file.h"

namespace paddle::runtime {

void PsWorkload::begin(bool initialize_dense) {
  if (fleet_.worker_index() == 0 && config_.ps.init_dir.empty() && initialize_dense)
    fleet_.parameter_store().init_dense(0, initial_dense());
  fleet_.ps_barrier();  // everyone starts from the initialized parameters
  step_ = make_ps_step(fleet_, trained_tables(), config_.lr_schedule.base_lr);
}

void PsWorkload::save_final(const CheckpointPosition&) {
  common::write_file_atomically(std::filesystem::path(config_.output_dir) / "dense.json",
                                nlohmann::json(fleet_.parameter_store().pull_dense(0)).dump() + "\n");
}

PsValues PsWorkload::fetch(std::vector<std::vector<uint64_t>> keys) {
  const auto start = std::chrono::steady_clock::now();
  PsValues values = step_->fetch(std::move(keys));
  communication_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return values;
}

void PsWorkload::apply(PsValues grads) {
  const auto start = std::chrono::steady_clock::now();
  step_->apply(std::move(grads));
  communication_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace paddle::runtime
