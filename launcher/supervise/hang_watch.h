#pragma once
// HangWatch: when a process that is alive has stopped making progress. About once a second the
// supervisor gives it each local process's signs of life (process_signs.h); it remembers when
// each last moved:
//   its log grew, or
//   its progress page's marks moved (our runtime: common/progress_page.h), or
//   it used CPU time outside a wait on others (a rank spinning in a collective is not moving),
//   at least kComputingShare of a core since the last reading (idle threads are not moving:
//   a Paddle 2.6 rank asleep in a gloo wait uses about 0.5% of one).
// A process quiet for its timeout is a hang, which is reported once (hang_verdict.h says who the
// culprit is); the processes quiet then (not going: quiet for 2 s, or half the timeout if less)
// are covered by that report until they move again. A process that may be waiting for its peers
// (in a collective, or a program without a page, whose waits we cannot see) is not hung while
// another watched process goes on: the ranks waiting at a barrier while rank 0 evaluates. A wait
// on the parameter servers is: they serve every worker independently.
//
// The timeout: --hang_timeout's for every process when it is given; otherwise, automatically,
// for the processes that keep a progress page only, and adapted to the job's own steps: the
// larger of 60 s and ten times the longest step seen, so a slow first step, a long evaluation or
// a checkpoint save (whose CPU time counts as progress) is never called a hang. A parameter
// server is never watched: waiting for requests is its work.

#include <chrono>
#include <optional>
#include <vector>

#include "common/progress_page.h"

namespace paddle::launcher {

struct ProcessSigns {
  double cpu_seconds = 0;            // user + system
  unsigned long long log_bytes = 0;  // the size of its log file
  char state = '?';                  // /proc's state letter: R, S, D, T, t, Z
  std::optional<common::ProgressReading> page;  // a process of our runtime
};

struct Hang {
  size_t process = 0;                 // the one whose timeout ran out first
  std::chrono::milliseconds timeout;  // its timeout
};

class HangWatch {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kAutomaticFloor{60};
  static constexpr int kAutomaticSteps = 10;
  static constexpr std::chrono::seconds kQuietNow{2};
  static constexpr double kComputingShare = 0.05;

  // `timeout`: --hang_timeout, or nothing for the automatic one; `servers`: per process, in the
  // supervisor's order, whether it is a parameter server.
  HangWatch(std::optional<std::chrono::milliseconds> timeout, std::vector<bool> servers, Clock::time_point start);

  // Each process's signs now (nothing: it has exited). A hang once a process has been quiet for
  // its timeout; then nothing again for the processes quiet now until they move.
  std::optional<Hang> observe(Clock::time_point now, const std::vector<std::optional<ProcessSigns>>& signs);

  // Seconds since each process last made progress (-1: exited), for the report and /metrics.
  std::vector<double> quiet_seconds(Clock::time_point now) const;
  // The timeout that applies to process `i` now; nothing while it is not watched.
  std::optional<std::chrono::milliseconds> timeout_of(size_t i) const;
  // Whether a report covers processes that have not moved since: the job is hung now.
  bool any_covered() const;
  // Whether process `i` moved lately, as a hang of `timeout` counts it: it is going on, not waiting.
  bool going(size_t i, Clock::time_point now, std::chrono::milliseconds timeout) const;

 private:
  struct Seen {
    std::optional<ProcessSigns> last;
    Clock::time_point read;     // when `last` was
    Clock::time_point changed;
    bool exited = false;
    bool covered = false;       // by a report, until it moves
    double longest_step = 0;    // seconds, from its page
  };
  bool waits_for_peers(size_t i) const;
  bool someone_going(size_t except, Clock::time_point now, std::chrono::milliseconds timeout) const;

  std::optional<std::chrono::milliseconds> timeout_;
  std::vector<bool> servers_;
  std::vector<Seen> seen_;
};

}  // namespace paddle::launcher
