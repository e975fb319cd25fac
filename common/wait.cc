#include "common/wait.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/error.h"

namespace paddle::common {

using Clock = std::chrono::steady_clock;

void wait_until_ready(const WaitOptions& options, const std::function<std::vector<std::string>()>& not_ready,
                      const std::function<std::string(const std::vector<std::string>&)>& timeout_message) {
  const auto start = Clock::now();
  auto next_report = start + options.report_interval;
  while (true) {
    const std::vector<std::string> missing = not_ready();
    if (missing.empty()) return;
    const auto now = Clock::now();
    if (now - start > options.timeout) throw TimeoutError(timeout_message(missing));
    if (now >= next_report) {
      fmt::print(options.report_to, "server not ready, wait 3 sec to retry...\nnot ready endpoints:[{}]\n",
                 fmt::join(missing, ", "));
      std::fflush(options.report_to);
      next_report += options.report_interval;
    }
    std::this_thread::sleep_for(options.poll_interval);
  }
}

bool wait_until(std::chrono::milliseconds timeout, const std::function<bool()>& done, std::chrono::milliseconds poll) {
  const auto deadline = Clock::now() + timeout;
  while (!done()) {
    const auto now = Clock::now();
    if (now >= deadline) return false;
    std::this_thread::sleep_for(std::min<Clock::duration>(poll, deadline - now));
  }
  return true;
}

bool sleep_for(std::chrono::milliseconds duration, const std::stop_token& stop) {
  std::mutex mutex;
  std::condition_variable_any wake;
  std::unique_lock lock(mutex);
  wake.wait_for(lock, stop, duration, [] { return false; });
  return !stop.stop_requested();
}

}  // namespace paddle::common
