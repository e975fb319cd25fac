#pragma once
// ConsoleEcho: shows the chosen processes' output (EchoSelection) on the console while the job
// runs, each line whole and labelled, from a thread of its own that follows their log files.
//
// The processes write to their log files and never to the console, so a slow console (a
// terminal over a slow link, a pipe nobody reads) cannot slow them; and since the echo has its
// own thread, it cannot stall the supervisor either. A console that cannot take a line within
// `write_timeout` loses lines instead of holding them: they are counted, said on the console
// when it takes lines again, and are all in the log files. finish() waits at most one more
// write_timeout in all, however much is left, so that a console nobody reads (srun's pipe to a
// client that stopped reading) cannot hold the launcher's exit.

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/background_thread.h"
#include "launcher/console/echo_selection.h"
#include "launcher/console/log_follower.h"
#include "launcher/plan/launch_plan.h"

namespace paddle::launcher {

struct ConsoleEchoOptions {
  int fd = STDOUT_FILENO;
  bool colour = false;  // labels in colour: on a terminal, unless NO_COLOR is set
  std::chrono::milliseconds interval{100};
  std::chrono::milliseconds write_timeout{1000};  // a console slower than this loses lines
  uint64_t max_lag = 8u << 20;                    // bytes a log may run ahead before lines are skipped
  bool logs_go_on = false;  // the logs are appended to (--log_overwrite=False): echo only what is new
};

class ConsoleEcho {
 public:
  ConsoleEcho(const LaunchPlan& plan, const EchoSelection& selection, ConsoleEchoOptions options);
  ~ConsoleEcho();
  ConsoleEcho(const ConsoleEcho&) = delete;
  ConsoleEcho& operator=(const ConsoleEcho&) = delete;

  // Echoes what is left (a last unfinished line too) within write_timeout and stops the thread;
  // returns the lines the console lost over the whole job.
  uint64_t finish();

 private:
  struct Followed {
    LogFollower follower;
    std::string label;
  };
  void run(const std::stop_token& stop);
  void echo_new_lines(bool final);
  // Writes `text` (whole lines) to the console, each line whole, or counts it as lost.
  void write_lines(std::string_view text, const std::string& label);
  bool write_all(std::string_view bytes, std::chrono::steady_clock::time_point deadline);

  ConsoleEchoOptions options_;
  std::vector<Followed> followed_;
  uint64_t lost_ = 0, lost_said_ = 0;
  std::mutex mutex_;
  std::condition_variable wake_;
  // When finish() must be done writing (steady_clock ticks; 0 until it is called).
  std::atomic<std::chrono::steady_clock::rep> finish_by_{0};
  common::BackgroundThread thread_;
};

// Whether labels should be coloured on `fd`: a terminal, and NO_COLOR unset or empty.
bool console_wants_colour(int fd, const std::optional<std::string>& no_color);

}  // namespace paddle::launcher
