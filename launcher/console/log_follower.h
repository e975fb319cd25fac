#pragma once
// LogFollower: reads the whole lines added to a growing log file since the last call, never a
// half line. When the reader falls more than `max_lag` bytes behind the file (a console slower
// than the job), it skips ahead to the newest lines and counts what it skipped instead of
// holding it: a follower's memory is bounded whatever the process writes.

#include <cstdint>
#include <string>

namespace paddle::launcher {

class LogFollower {
 public:
  // `start_at` bytes of the file are passed over: an earlier run's, in a log that goes on.
  explicit LogFollower(std::string path, uint64_t max_lag = 8u << 20, long start_at = 0)
      : path_(std::move(path)), max_lag_(max_lag), offset_(start_at) {}

  // The complete lines written since the last call, each ending in '\n' (empty: none yet). At
  // the end of the job (`final`), a last unfinished line comes too, given its newline.
  std::string read_lines(bool final = false);
  // Lines passed over because the reader was too far behind, so far.
  uint64_t skipped_lines() const { return skipped_lines_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  uint64_t max_lag_;
  long offset_ = 0;
  std::string partial_;
  uint64_t skipped_lines_ = 0;
};

}  // namespace paddle::launcher
