#include "launcher/supervise/orphan_watchdog.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fmt/format.h>
#include <thread>

#include "common/error.h"

namespace paddle::launcher {
namespace {

// The watchdog's body, in the forked child; never returns. `commands` is the pipe's read end.
[[noreturn]] void watch(int commands) {
  ::prctl(PR_SET_NAME, kWatchdogProcessName);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) std::signal(sig, SIG_IGN);
  std::string said;
  char buffer[512];
  for (ssize_t n; (n = ::read(commands, buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno != EINTR) break;
    if (n > 0 && said.size() < 64 * 1024) said.append(buffer, static_cast<size_t>(n));
  }
  const size_t space = said.find(' ');
  const size_t end = said.find('\n');
  if (space == std::string::npos || end == std::string::npos || end < space) ::_exit(0);  // nothing guarded
  const OrphanGuard::Mode mode =
      said.compare(0, space, "cgroup") == 0 ? OrphanGuard::Mode::kCgroup : OrphanGuard::Mode::kEnvironment;
  const std::string target = said.substr(space + 1, end - space - 1);
  // A daemon may be forking as we go: sweep until a pass finds nothing, for up to 2 s.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (signal_marked_processes(mode, target, SIGKILL) > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (mode == OrphanGuard::Mode::kCgroup)
    while (::rmdir(target.c_str()) != 0 && errno == EBUSY && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ::_exit(0);
}

}  // namespace

OrphanWatchdog::OrphanWatchdog() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw common::Error(fmt::format("orphan guard: cannot make the watchdog's pipe: {}", std::strerror(errno)));
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();
    // It holds nothing of the launcher's: not its console (a `paddle-launch ... | tee` ends with
    // the launcher), not its descriptors; only the pipe, as its standard input.
    ::dup2(fds[0], STDIN_FILENO);
    if (const int null = ::open("/dev/null", O_WRONLY); null >= 0) {
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
    }
    ::close(fds[0]);
    ::close(fds[1]);  // else the pipe would never close
    ::syscall(SYS_close_range, 3u, ~0u, 0u);  // a kernel before 5.9 keeps the rest, which are harmless
    watch(STDIN_FILENO);
  }
  ::close(fds[0]);
  if (pid < 0) {
    ::close(fds[1]);
    throw common::Error(fmt::format("orphan guard: cannot start the watchdog: {}", std::strerror(errno)));
  }
  pid_ = pid;
  pipe_ = fds[1];
}

OrphanWatchdog::~OrphanWatchdog() {
  if (pipe_ >= 0) ::close(pipe_);
}

void OrphanWatchdog::guard(OrphanGuard::Mode mode, const std::string& target) {
  const std::string line = fmt::format("{} {}\n", mode == OrphanGuard::Mode::kCgroup ? "cgroup" : "environment", target);
  // One write under PIPE_BUF (4 KiB) is atomic; a cgroup path is far shorter.
  if (line.size() > 4096 || ::write(pipe_, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
    throw common::Error(fmt::format("orphan guard: cannot tell the watchdog (pid {}) what to guard: {}", pid_,
                                    line.size() > 4096 ? "the cgroup's path is too long" : std::strerror(errno)));
}

}  // namespace paddle::launcher
