#pragma once
// OrphanGuard: no process of the job outlives it, however deep in the process tree it is
// (grandchildren, double-forked daemons, processes that changed their group or session) and
// however the launcher ends, SIGKILL included.
//
// Every process the launcher starts is marked as the job's, and everything it starts inherits
// the mark:
//  - cgroup: a cgroup v2 of the job's own, `paddle-launch-PID` beneath the launcher's cgroup,
//    which each child joins before it execs (so not even a process forked at once escapes).
//    Stopping it is one write to `cgroup.kill` (Linux 5.14; else each member is signalled).
//  - environment: where no cgroup v2 can be made (read-only /sys/fs/cgroup, cgroup v1 only),
//    each child gets PADDLE_LAUNCH_JOB_KEYS, a random key of this job appended to any keys of
//    an enclosing job, and the job's processes are found by it in /proc/PID/environ. A process
//    that clears its environment escapes this mode; the launch log says which mode is in use.
// PADDLE_ORPHAN_GUARD=cgroup or =environment picks one (auto: cgroup where it can).
//
// A watchdog process (this launcher's binary, run as `paddle-launch --orphan-watchdog ...` in a
// session of its own, ignoring SIGINT/SIGTERM/SIGHUP) holds the read end of a pipe whose write
// end only the launcher holds. When the launcher ends, by exit or by any signal, the pipe
// closes and the watchdog kills every marked process and removes the cgroup.

#include <sys/types.h>

#include <string>

#include "launcher/plan/environment.h"

namespace paddle::launcher {

class OrphanGuard {
 public:
  enum class Mode { kCgroup, kEnvironment };

  // Makes the cgroup (or the key) and starts the watchdog. Throws common::ConfigError when
  // PADDLE_ORPHAN_GUARD asks for a mode this machine cannot give, saying why.
  explicit OrphanGuard(const EnvMap& env);
  // Kills whatever of the job is left, and lets the watchdog go.
  ~OrphanGuard();
  OrphanGuard(const OrphanGuard&) = delete;
  OrphanGuard& operator=(const OrphanGuard&) = delete;

  Mode mode() const { return mode_; }
  // "cgroup v2 /sys/fs/cgroup/.../paddle-launch-123 (cgroup.kill)" or "the environment
  // (PADDLE_LAUNCH_JOB_KEYS; no cgroup v2: ...)", for the launch log.
  std::string describe() const { return description_; }

  // What a child must get: the open cgroup.procs it joins before exec (-1 in environment
  // mode), and the variable to add to its environment.
  int cgroup_procs_fd() const { return procs_fd_; }
  std::pair<std::string, std::string> child_variable() const;

  // Sends `sig` to every live process of the job; returns how many there were.
  int signal_all(int sig) const;

 private:
  void start_watchdog();

  Mode mode_ = Mode::kEnvironment;
  std::string description_;
  std::string cgroup_dir_;
  std::string key_;
  std::string inherited_keys_;  // an enclosing job's PADDLE_LAUNCH_JOB_KEYS
  int procs_fd_ = -1;
  int watchdog_pipe_ = -1;  // the write end
  pid_t watchdog_pid_ = -1;
};

// What PADDLE_ORPHAN_GUARD asks for: "auto" (also when unset), "cgroup" or "environment".
// Throws common::ConfigError naming the variable for anything else; the launcher asks before it
// starts or writes anything.
std::string orphan_guard_choice(const EnvMap& env);

// The name `ps` and `top` show for the watchdog (at most 15 characters, the kernel's limit).
inline constexpr const char* kWatchdogProcessName = "paddle-watchdog";

// The watchdog's body (`paddle-launch --orphan-watchdog cgroup DIR` or `... environment KEY`):
// names itself kWatchdogProcessName, waits for stdin to close, kills the job's processes, removes
// the cgroup; returns the exit status.
int run_orphan_watchdog(int argc, const char* const argv[]);

// Kills every process of the job marked by `key` (environment mode) or in `cgroup_dir`, with
// `sig`; returns how many were signalled. Shared by the launcher and its watchdog.
int signal_marked_processes(OrphanGuard::Mode mode, const std::string& target, int sig);

}  // namespace paddle::launcher
