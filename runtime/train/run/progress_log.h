#pragma once
// ProgressLog: where train's figures go while it runs. Two kinds listen: the metrics log the
// launcher's job page reads (metrics_log.h), and TensorBoard's event files
// (tensorboard/tensorboard_progress.h); ProgressLogs hands each figure to all it holds.
//
//   step    every log_every steps: the step's loss, learning rate, samples/s and communication
//   epoch   the end of an epoch (a pass, online) with the leader's figures of it (report.h's
//           history entry: "train_loss", "test_loss", "test_auc", ...)
//   tables  a parameter server's tables (metrics_log.h's write_tables)

#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

namespace paddle::runtime {

struct MetricsLine {
  int64_t step = 0, round = 0;  // written as "epoch", Paddle's name
  double loss = 0;
  std::optional<double> lr;
  double samples_per_sec = 0;
  double comm_seconds_per_step = 0;
};

class ProgressLog {
 public:
  virtual ~ProgressLog() = default;
  virtual void step(const MetricsLine& line) = 0;
  virtual void round_done(int64_t /*round*/, const nlohmann::json& /*figures*/) {}
  virtual void tables(int64_t /*step*/, const nlohmann::json& /*tables*/) {}
};

class ProgressLogs : public ProgressLog {
 public:
  // Ignores null logs; those added must outlive this.
  void add(ProgressLog* log) {
    if (log != nullptr) logs_.push_back(log);
  }
  bool empty() const { return logs_.empty(); }

  void step(const MetricsLine& line) override {
    for (ProgressLog* log : logs_) log->step(line);
  }
  void round_done(int64_t round, const nlohmann::json& figures) override {
    for (ProgressLog* log : logs_) log->round_done(round, figures);
  }
  void tables(int64_t step, const nlohmann::json& tables) override {
    for (ProgressLog* log : logs_) log->tables(step, tables);
  }

 private:
  std::vector<ProgressLog*> logs_;
};

}  // namespace paddle::runtime
