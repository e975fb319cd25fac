#pragma once
// HangWatch: whether a job whose processes are alive has stopped making progress, and which
// process is the culprit. About once a second the supervisor gives it each local process's signs
// of life (process_signs.h: its CPU time and the bytes of its log, which any program shows without
// code of ours); it remembers when each last changed. Once no process has changed for the
// timeout, it gives one verdict, naming as the culprit the first of:
//   a process stopped (SIGSTOP, state T) or held by a tracer (t);
//   a process in uninterruptible sleep (D), which no signal reaches;
//   the process that went quiet first, by a second or more: the others wait for it;
//   else none in particular (they went quiet together: a deadlock, or all wait on something else).
// After a verdict it says nothing more until some process makes progress again.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace paddle::launcher {

struct ProcessSigns {
  unsigned long long cpu_ticks = 0;  // user + system, in clock ticks
  unsigned long long log_bytes = 0;  // the size of its log file
  char state = '?';                  // /proc's state letter: R, S, D, T, t, Z
};

struct HangVerdict {
  std::optional<size_t> culprit;      // index into the processes, when one stands out
  std::vector<double> quiet_seconds;  // per process, since its last progress (-1: exited)
  std::string why;                    // "it is stopped (SIGSTOP)", "it went quiet 12 s before the others"
};

class HangWatch {
 public:
  using Clock = std::chrono::steady_clock;

  // `processes`: how many the job has here, in the supervisor's order.
  HangWatch(std::chrono::milliseconds timeout, size_t processes, Clock::time_point start);

  // Each process's signs now (nothing: it has exited). A verdict once every process still alive has
  // been quiet for the timeout; nothing otherwise, and nothing again until one makes progress.
  std::optional<HangVerdict> observe(Clock::time_point now, const std::vector<std::optional<ProcessSigns>>& signs);

  // Seconds since each process last made progress (-1: exited), for the job page and /metrics.
  std::vector<double> quiet_seconds(Clock::time_point now) const;

 private:
  struct Seen {
    std::optional<ProcessSigns> last;
    Clock::time_point changed;
    bool exited = false;
  };
  std::chrono::milliseconds timeout_;
  std::vector<Seen> seen_;
  bool reported_ = false;
};

// "stopped (SIGSTOP)", "in uninterruptible sleep (D)", "sleeping", ...: a state letter for people.
std::string describe_process_state(char state);

}  // namespace paddle::launcher
