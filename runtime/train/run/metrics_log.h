#pragma once
// MetricsLog: a training process's progress, one JSON line per logged step, appended to the
// file PADDLE_METRICS_FILE names (the launcher sets LOG_DIR/metrics.<role>.<rank>.jsonl), for
// `paddle-launch status` and the job page to read while the job runs. A line:
//
//   {"time": 1763900000.125, "step": 120, "epoch": 1, "loss": 0.3412, "lr": 0.01,
//    "samples_per_sec": 2840.5, "comm_seconds_per_step": 0.0021}
//
// time is seconds since the Unix epoch; samples_per_sec is this process's, over the steps
// since the previous line; comm_seconds_per_step is the communication the step could not hide
// (waiting for averaged gradients, or pulls and pushes to the servers); lr may be null. A
// parameter server's lines carry its tables' memory instead (write_tables). Any program may
// write these lines: the readers need only "time" and "step".

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/environment.h"
#include "runtime/train/run/progress_log.h"

namespace paddle::runtime {

class MetricsLog : public ProgressLog {
 public:
  // Appends to `path`; common::DataError naming it when it cannot be opened.
  explicit MetricsLog(const std::string& path);
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;

  // The log PADDLE_METRICS_FILE names, or none when it is unset or empty.
  static std::unique_ptr<MetricsLog> from_environment(const common::Environment& env);

  // One line, flushed at once so that readers see it.
  void write(const MetricsLine& line);
  // A parameter server's line: its tables' memory, [{"table", "rows", "value_bytes",
  // "index_bytes"}, ...], after `step` requests served; a table with a disk tier adds "tier":
  // {"memory_rows", "disk_rows", "disk_bytes", "hit_rate", "disk_reads_per_s", "evictions_per_s"}.
  void write_tables(int64_t step, const nlohmann::json& tables);

  void step(const MetricsLine& line) override { write(line); }
  void tables(int64_t step, const nlohmann::json& tables) override { write_tables(step, tables); }

 private:
  void append(const nlohmann::json& line);

  std::string path_;
  std::FILE* file_;
};

}  // namespace paddle::runtime
