#pragma once
// Trainer: the data-parallel training loop of the `train` program, for every model it can build.
// Rank 0 evaluates on the test set and saves a checkpoint after each epoch, and writes
// OUTPUT_DIR/metrics.json and OUTPUT_DIR/final.bin (checkpoint format) at the end.

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/error.h"
#include "runtime/distributed/distributed_context.h"

namespace paddle::runtime {

// Raised when the loss becomes NaN or infinite; the message is Paddle's.
class NanLossError : public common::Error {
 public:
  static constexpr int kExitCode = 3;
  NanLossError() : common::Error("got NaN loss, training failed.", kExitCode) {}
};

// Trains as `config` says; returns the metrics it wrote. `restart_count` > 0 resumes from the
// latest checkpoint like resume=true.
nlohmann::json train(const nlohmann::json& config, DistributedContext& ctx, int restart_count);

}  // namespace paddle::runtime
