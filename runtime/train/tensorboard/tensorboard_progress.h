#pragma once
// TensorBoardProgress: train's figures as TensorBoard scalars (tensorboard_log.h), in the run
// directory OUTPUT_DIR/tensorboard/ROLE+RANK (trainer0, worker0, server1). Tags:
//
//   train/loss, train/learning_rate, train/samples_per_sec   per logged step
//   test/loss, test/acc, test/auc, ... (each test_* figure)  per round (an epoch or online pass), at step = the round
//   tables/NAME/rows                                         a server's, per report, at its count
//
// It writes a file at the end of a round or after a table report (at most one a second), within
// 30 s of a step in a long round, and when it is destroyed.

#include <chrono>
#include <string>

#include "runtime/train/run/progress_log.h"
#include "runtime/train/tensorboard/tensorboard_log.h"

namespace paddle::tensorboard {

class TensorBoardProgress : public runtime::ProgressLog {
 public:
  explicit TensorBoardProgress(const std::string& run_dir) : log_(run_dir) {}

  void step(const runtime::MetricsLine& line) override;
  void round_done(int64_t round, const nlohmann::json& figures) override;
  void tables(int64_t step, const nlohmann::json& tables) override;

 private:
  // Flushes when the last flush is at least `since_last` ago.
  void flush_after(std::chrono::steady_clock::duration since_last);

  TensorBoardLog log_;
  std::chrono::steady_clock::time_point flushed_ = std::chrono::steady_clock::now();
};

}  // namespace paddle::tensorboard
