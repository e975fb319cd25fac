#pragma once
// TensorBoardLog: scalars as TensorBoard event files in one run directory,
// OUTPUT_DIR/tensorboard/RUN/ (RUN: trainer0, worker0, server1, ...).
//
// Scalars wait in memory until flush(), which writes them, after a file_version event, as one new
// file events.out.tfevents.START.HOST.PID.NNNNNN: written under another name and renamed, so a
// file TensorBoard sees is always whole, however the process ends (SIGKILL mid-flush
// included). TensorBoard reads a run's files in name order, which is the order they were written.

#include <cstdint>
#include <string>
#include <vector>

namespace paddle::tensorboard {

class TensorBoardLog {
 public:
  // Makes `run_dir`; common::DataError naming it when it cannot.
  explicit TensorBoardLog(std::string run_dir);
  // Flushes what is left; a failure to is lost figures, not the run's failure, so it is only said on stderr.
  ~TensorBoardLog();
  TensorBoardLog(const TensorBoardLog&) = delete;
  TensorBoardLog& operator=(const TensorBoardLog&) = delete;

  void scalar(const std::string& tag, int64_t step, double value);
  // Writes the scalars since the last flush as a new file (nothing when there are none);
  // common::DataError naming the file when it cannot.
  void flush();

  const std::string& run_dir() const { return run_dir_; }

 private:
  std::string run_dir_;
  std::string file_prefix_;  // run_dir/events.out.tfevents.START.HOST.PID.
  int files_ = 0;
  std::vector<std::string> pending_;  // framed records
};

}  // namespace paddle::tensorboard
