#pragma once
// LogEcho: follows a growing log file and copies it to an output stream, whole lines only, so
// that the console shows local rank 0's output while the job runs without interleaving halves
// of lines with the launcher's own messages.

#include <cstdio>
#include <string>
#include <string_view>

#include "launcher/console/log_follower.h"

namespace paddle::launcher {

class LogEcho {
 public:
  // Each line copied starts with `prefix` ("[host-a] "; empty: the lines as they are).
  LogEcho(std::string path, std::FILE* out, std::string prefix = {})
      : follower_(std::move(path)), out_(out), prefix_(std::move(prefix)) {}

  // Copies every complete line written since the last call.
  void poll();
  // Copies what is left, ending a last partial line with a newline.
  void finish();

 private:
  void write_lines(std::string_view lines);  // whole lines, each ending in '\n'

  LogFollower follower_;
  std::FILE* out_;
  std::string prefix_;
};

// The last `count` lines of a file (at most the last 64 KiB of it), for failure reports.
std::string last_lines(const std::string& path, int count);

}  // namespace paddle::launcher
