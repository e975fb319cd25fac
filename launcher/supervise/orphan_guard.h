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
// The watchdog (orphan_watchdog.h), forked when the launcher started, is told what to guard; when
// the launcher ends, by exit or by any signal, it kills every marked process and removes the cgroup.

#include <sys/types.h>

#include <string>

#include "launcher/plan/environment.h"

namespace paddle::launcher {

class OrphanWatchdog;

class OrphanGuard {
 public:
  enum class Mode { kCgroup, kEnvironment };

  // Makes the cgroup (or the key) and tells `watchdog` to guard it. Throws common::ConfigError
  // when PADDLE_ORPHAN_GUARD asks for a mode this machine cannot give, saying why, and
  // common::Error when the watchdog is gone.
  OrphanGuard(const EnvMap& env, OrphanWatchdog& watchdog);
  // Kills whatever of the job is left (the watchdog sweeps once more when the launcher ends).
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
  Mode mode_ = Mode::kEnvironment;
  std::string description_;
  std::string cgroup_dir_;
  std::string key_;
  std::string inherited_keys_;  // an enclosing job's PADDLE_LAUNCH_JOB_KEYS
  int procs_fd_ = -1;
};

// What PADDLE_ORPHAN_GUARD asks for: "auto" (also when unset), "cgroup" or "environment".
// Throws common::ConfigError naming the variable for anything else; the launcher asks before it
// starts or writes anything.
std::string orphan_guard_choice(const EnvMap& env);

// Kills every process of the job marked by `key` (environment mode) or in `cgroup_dir`, with
// `sig`; returns how many were signalled. Shared by the launcher and its watchdog.
int signal_marked_processes(OrphanGuard::Mode mode, const std::string& target, int sig);

}  // namespace paddle::launcher
