#include "launcher/console/console_echo.h"

#include <filesystem>

#include <fmt/format.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <climits>

namespace paddle::launcher {
namespace {

using Clock = std::chrono::steady_clock;

// ANSI colours for labels: servers in magenta, the others by rank in turn.
std::string coloured(const std::string& label, const ProcessSpec& p) {
  static constexpr int kColours[] = {36, 32, 33, 34, 96, 92, 93, 94};
  const int colour = p.role == Role::kServer ? 35 : kColours[p.rank % 8];
  return fmt::format("\x1b[{}m{}\x1b[0m ", colour, label.substr(0, label.size() - 1));
}

}  // namespace

bool console_wants_colour(int fd, const std::optional<std::string>& no_color) {
  return ::isatty(fd) == 1 && (!no_color || no_color->empty());
}

ConsoleEcho::ConsoleEcho(const LaunchPlan& plan, const EchoSelection& selection, ConsoleEchoOptions options)
    : options_(options) {
  const auto chosen = selection.pick(plan);
  for (const ProcessSpec* p : chosen) {
    std::string label = selection.label(plan, *p, chosen.size());
    if (options_.colour && !label.empty()) label = coloured(label, *p);
    std::error_code missing;
    const auto earlier = options_.logs_go_on ? std::filesystem::file_size(p->log_file, missing) : 0;
    followed_.push_back({LogFollower(p->log_file, options_.max_lag, missing ? 0 : static_cast<long>(earlier)), std::move(label)});
  }
  thread_.start("console-echo", [this](std::stop_token stop) { run(stop); }, [this] {
    std::lock_guard lock(mutex_);
    wake_.notify_all();
  });
}

ConsoleEcho::~ConsoleEcho() { finish(); }

uint64_t ConsoleEcho::finish() {
  if (thread_.running()) {
    finish_by_ = (Clock::now() + options_.write_timeout).time_since_epoch().count();
    thread_.stop();
  }
  return lost_;
}

void ConsoleEcho::run(const std::stop_token& stop) {
  std::unique_lock lock(mutex_);
  while (!stop.stop_requested()) {
    lock.unlock();
    echo_new_lines(false);
    lock.lock();
    wake_.wait_for(lock, options_.interval, [&] { return stop.stop_requested(); });
  }
  lock.unlock();
  echo_new_lines(true);
}

void ConsoleEcho::echo_new_lines(bool final) {
  for (Followed& f : followed_) {
    const uint64_t skipped_before = f.follower.skipped_lines();
    const std::string lines = f.follower.read_lines(final);
    lost_ += f.follower.skipped_lines() - skipped_before;
    if (!lines.empty()) write_lines(lines, f.label);
  }
  if (lost_ > lost_said_) {
    const std::string note = fmt::format(
        "paddle-launch: {} lines of output did not reach the console, which is slower than the job "
        "(every line is in the log files)\n", lost_ - lost_said_);
    if (write_all(note, Clock::now() + options_.write_timeout)) lost_said_ = lost_;
  }
}

void ConsoleEcho::write_lines(std::string_view text, const std::string& label) {
  std::string line;
  while (!text.empty()) {
    const size_t end = text.find('\n') + 1;
    line.assign(label);
    line.append(text.substr(0, end));
    text.remove_prefix(end);
    if (!write_all(line, Clock::now() + options_.write_timeout)) {
      lost_ += 1 + static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n'));
      return;
    }
  }
}

// Waits for room (poll) before each write, so that no write blocks past the deadline; a line
// begun is finished within a second deadline, so that the console never shows half a line,
// unless finish()'s deadline comes first.
bool ConsoleEcho::write_all(std::string_view bytes, Clock::time_point deadline) {
  bool begun = false, extended = false;
  while (!bytes.empty()) {
    if (const auto finish_by = finish_by_.load(); finish_by != 0) {
      const Clock::time_point hard{Clock::duration(finish_by)};
      if (Clock::now() >= hard) return false;
      deadline = std::min(deadline, hard);
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      if (!begun || extended) return false;
      deadline = Clock::now() + options_.write_timeout;
      extended = true;
      continue;
    }
    pollfd p{options_.fd, POLLOUT, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    if (p.revents & (POLLERR | POLLHUP | POLLNVAL)) return false;
    const ssize_t n = ::write(options_.fd, bytes.data(), std::min<size_t>(bytes.size(), PIPE_BUF));
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return false;
    }
    begun = true;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace paddle::launcher
