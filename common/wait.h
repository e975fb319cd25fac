#pragma once
// Waiting for peers, the one way every part of the job does it: poll, report who is missing in
// Paddle's words every few seconds, and give up at a deadline naming them; and retrying a
// request that failed for a moment, up to a deadline (retry_until).
//
//   server not ready, wait 3 sec to retry...
//   not ready endpoints:[127.0.0.1:6071, 127.0.0.1:6072]

#include <chrono>
#include <cstdio>
#include <functional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace paddle::common {

struct WaitOptions {
  std::chrono::milliseconds timeout{300000};
  std::chrono::milliseconds report_interval{3000};
  std::chrono::milliseconds poll_interval{50};
  std::FILE* report_to = stderr;
};

// Calls `not_ready` until it returns nothing; what it returns are the names (endpoints) still
// missing. At the timeout throws TimeoutError with `timeout_message(missing)`.
void wait_until_ready(const WaitOptions& options, const std::function<std::vector<std::string>()>& not_ready,
                      const std::function<std::string(const std::vector<std::string>&)>& timeout_message);

// Calls `done` every `poll` until it returns true or `timeout` passes (it is called once more at
// the deadline); returns whether it did.
bool wait_until(std::chrono::milliseconds timeout, const std::function<bool()>& done,
                std::chrono::milliseconds poll = std::chrono::milliseconds(10));

// Sleeps `duration`, or less when `stop` is requested meanwhile; returns whether it slept it all.
bool sleep_for(std::chrono::milliseconds duration, const std::stop_token& stop);

// A type no call throws: retry_until's default for the errors that are never retried.
struct NeverThrown {};

// Calls `attempt` until it returns true. An attempt that throws `Retried` (a request that failed
// for a moment: a peer not up yet, a connection reset) is tried again after `pause`; one that
// returns false (it waited on the peer itself: a long poll that ran out) at once. Gives up, and
// returns false, at `deadline` or when `stop` says so; `attempt` runs at least once. `Fatal` (a
// kind of Retried that no retry mends, such as a refusal) and every other error go through.
template <class Retried, class Fatal = NeverThrown>
bool retry_until(std::chrono::steady_clock::time_point deadline, std::chrono::milliseconds pause,
                 const std::function<bool()>& attempt, const std::function<bool()>& stop = {}) {
  while (true) {
    bool failed = false;
    try {
      if (attempt()) return true;
    } catch (const Fatal&) {
      throw;
    } catch (const Retried&) {
      failed = true;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline || (stop && stop())) return false;
    if (failed) std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
  }
}

}  // namespace paddle::common
