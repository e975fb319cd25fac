#include "runtime/train/run/schedule.h"

#include <fmt/format.h>

namespace paddle::runtime {

EpochSchedule::EpochSchedule(const TrainConfig& config, Workload& workload) : config_(config), workload_(workload) {}

Round EpochSchedule::round(size_t index) const {
  const auto epoch = static_cast<int64_t>(index);
  return {epoch, fmt::format("pass: {}", epoch), nlohmann::json::object()};
}

void EpochSchedule::after_round(const Round&, const CheckpointPosition& at, bool complete) {
  if (complete && config_.checkpoint && workload_.worker_index() == 0) workload_.save_checkpoint(at);
}

}  // namespace paddle::runtime
