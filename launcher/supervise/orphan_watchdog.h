#pragma once
// OrphanWatchdog: the process that outlives the launcher to stop what its job left behind
// (OrphanGuard, orphan_guard.h), however the launcher ends, SIGKILL included.
//
// It is forked at the start of a run, while the launcher still has one thread, and is not
// exec'd: the child of a single-threaded process may run ordinary code (allocate, read /proc).
// A re-exec of the launcher's binary cost every launcher some 2 ms of CPU, mapping and
// relocating it again, a fifth of a small job's launcher (and 1 s of a 512-node job's on one
// machine).
//
// In a session of its own (`paddle-watchdog` in `ps`, its command line `paddle-launch
// --orphan-watchdog`), output to /dev/null and SIGINT, SIGTERM and SIGHUP ignored, it reads a pipe whose write end only the
// launcher holds: first one line saying what to guard ("cgroup DIR" or "environment KEY"), once
// the launcher has made it; then nothing until the pipe closes, which is the launcher's end. It
// then kills every marked process, sweeping until a pass finds none (up to 2 s: a daemon may be
// forking), removes the cgroup and exits. A launcher that ends before it guards anything (bad
// input) lets it exit at once.

#include <sys/types.h>

#include <string>

#include "launcher/supervise/orphan_guard.h"

namespace paddle::launcher {

// The name `ps` and `top` show for the watchdog (at most 15 characters, the kernel's limit).
inline constexpr const char* kWatchdogProcessName = "paddle-watchdog";

class OrphanWatchdog {
 public:
  // Forks the watchdog. Call while the process has one thread. Throws common::Error when the
  // pipe or the process cannot be made.
  OrphanWatchdog();
  // Closes the pipe: the watchdog sweeps what it guards and exits.
  ~OrphanWatchdog();
  OrphanWatchdog(const OrphanWatchdog&) = delete;
  OrphanWatchdog& operator=(const OrphanWatchdog&) = delete;

  // Tells the watchdog what to sweep when the launcher ends (OrphanGuard does, once). Throws
  // common::Error when the watchdog is gone (the launcher ignores SIGPIPE; a program that does
  // not would die of it instead).
  void guard(OrphanGuard::Mode mode, const std::string& target);

  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int pipe_ = -1;  // the write end
};

}  // namespace paddle::launcher
