#include "launcher/supervise/orphan_watchdog.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fmt/format.h>
#include <thread>

#include "common/error.h"
#include "launcher/supervise/close_on_exec.h"

namespace paddle::launcher {
namespace {

// `ps` shows what it is: the command line it shares with the launcher (copied by the fork, in
// the area /proc/self/cmdline reads) becomes "paddle-launch --orphan-watchdog", cut to fit, so
// that a `pkill -f` of the launcher's command line does not take its watchdog too.
void rename_command_line() {
  const int fd = ::open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  size_t size = 0;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) size += static_cast<size_t>(n);
  ::close(fd);
  if (size < 2) return;
  static constexpr char kLine[] = "paddle-launch\0--orphan-watchdog";  // with its final '\0'
  char* area = program_invocation_name;  // argv[0], the start of the area
  std::memset(area, 0, size);
  std::memcpy(area, kLine, std::min(size - 1, sizeof kLine - 1));
}

// Gives the watchdog standard input `commands` (the pipe's read end), output and error to
// /dev/null, and nothing else, whichever descriptors the pipe got (0 to 2, if the launcher was
// started with those closed). The write end goes too: else the pipe would never close.
void keep_only(int commands, int write_end) {
  const int in = ::fcntl(commands, F_DUPFD, 3);
  const int null_at = ::open("/dev/null", O_WRONLY);
  const int null = null_at >= 0 ? ::fcntl(null_at, F_DUPFD, 3) : -1;
  ::close(commands);
  ::close(write_end);
  ::dup2(in, STDIN_FILENO);
  if (null >= 0) {
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
  } else {
    ::close(STDOUT_FILENO);
    ::close(STDERR_FILENO);
  }
  if (::syscall(SYS_close_range, 3u, ~0u, 0u) == 0) return;
  // A kernel before 5.9, or a sandbox that refuses close_range: one at a time.
  for (int fd = 3, last = descriptor_limit(); fd < last; ++fd) ::close(fd);
}

// The watchdog's body, in the forked child; never returns. Its standard input is the pipe.
[[noreturn]] void watch() {
  try {
    std::string said;
    char buffer[512];
    for (ssize_t n; (n = ::read(STDIN_FILENO, buffer, sizeof buffer)) != 0;) {
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
  } catch (...) {
    // Never back into the launcher's own code (its catch in main, its destructors and atexit).
  }
  ::_exit(0);
}

}  // namespace

OrphanWatchdog::OrphanWatchdog() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw common::Error(fmt::format("orphan guard: cannot make the watchdog's pipe: {}", std::strerror(errno)));
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Its signals, name and command line first; then it lets go of everything of the launcher's,
    // its console (a `paddle-launch ... | tee` ends with the launcher) and its descriptors, keeping
    // only the pipe. Its own session comes last, so that a process in a session of its own under
    // the launcher is the watchdog as ps shows it, whenever one looks.
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) std::signal(sig, SIG_IGN);
    ::prctl(PR_SET_NAME, kWatchdogProcessName);
    rename_command_line();
    keep_only(fds[0], fds[1]);
    ::setsid();
    watch();
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
