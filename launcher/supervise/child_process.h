#pragma once
// ChildProcess: one launched process, started with Boost.Process, in a process group of its
// own (so that stopping it reaches whatever it started), with stdout and stderr merged into its
// log file, stdin from /dev/null (or a pipe from the launcher, kStdinPipe), and a parent-death
// signal so that it dies with the launcher even when the launcher is killed with SIGKILL.

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <boost/process/child.hpp>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/plan/environment.h"

namespace paddle::launcher {

class ChildProcess {
 public:
  // Called once, from the io_context, with the wait status (as from waitpid).
  using ExitHandler = std::function<void(int wait_status)>;
  enum class Stdin { kNull, kPipe };
  // A fresh log file, or the one a process restarted in place goes on writing.
  enum class Log { kFresh, kAppend };

  // Starts the process; throws common::Error (DataError for the log file) naming the command or
  // the log file when it cannot.
  // `join_cgroup_fd`: an open cgroup.procs the child moves itself into before it execs
  // (orphan_guard.h), or -1.
  ChildProcess(boost::asio::io_context& io, const std::vector<std::string>& argv, const EnvMap& env,
               const std::string& log_file, ExitHandler on_exit, Stdin stdin_from = Stdin::kNull,
               int join_cgroup_fd = -1, Log log_mode = Log::kFresh);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool exited() const { return exited_; }

  // Sends `sig` to the process group; harmless once the group is gone.
  void signal_group(int sig) const;
  // Counts the process as ended by `wait_status` now, its exit handler called, though it still
  // runs (one the kernel will not let die: stop_policy.h); its real end is then ignored.
  void abandon(int wait_status);

  // kPipe: writes `text` to the process's stdin without blocking (what a full pipe cannot take
  // is dropped); false once the process no longer reads it.
  bool write_stdin(std::string_view text);
  // kPipe: the process reads end-of-file from now on. Harmless twice.
  void close_stdin();

 private:
  pid_t pid_ = -1;
  int stdin_fd_ = -1;  // the pipe's write end, close-on-exec so no other child holds it open
  bool exited_ = false;
  bool abandoned_ = false;
  ExitHandler on_exit_;
  boost::process::child child_;
};

// "exit code 3", "signal SIGKILL (9)".
std::string describe_wait_status(int wait_status);

// What a shell reports for the status: the exit code, or 128 + the signal number.
int shell_exit_status(int wait_status);

}  // namespace paddle::launcher
