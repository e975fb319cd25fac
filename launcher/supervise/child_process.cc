#include "launcher/supervise/child_process.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/process/args.hpp>
#include <boost/process/async.hpp>
#include <boost/process/env.hpp>
#include <boost/process/environment.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/extend.hpp>
#include <boost/process/io.hpp>
#include <csignal>
#include <cstring>
#include <fmt/format.h>
#include <stdexcept>

#include "launcher/supervise/close_on_exec.h"
#include "common/error.h"

namespace paddle::launcher {
namespace {

namespace bp = boost::process;

bp::environment to_bp_environment(const EnvMap& env) {
  bp::environment result;
  for (const auto& [k, v] : env) result[k] = v;
  return result;
}

// Runs in the child between fork and exec: only async-signal-safe calls.
struct ChildSetup {
  pid_t launcher_pid;
  int join_cgroup_fd;
  void operator()(auto& /*executor*/) const {
    if (join_cgroup_fd >= 0 && ::write(join_cgroup_fd, "0", 1) != 1) ::_exit(126);  // unguarded: do not run
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != launcher_pid) ::_exit(128 + SIGKILL);  // the launcher died before prctl
    for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGCHLD, SIGHUP}) ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    close_inherited_descriptors_on_exec();
  }
};

}  // namespace

ChildProcess::ChildProcess(boost::asio::io_context& io, const std::vector<std::string>& argv, const EnvMap& env,
                           const std::string& log_file, ExitHandler on_exit, Stdin stdin_from, int join_cgroup_fd,
                           Log log_mode) {
  std::FILE* log = std::fopen(log_file.c_str(), log_mode == Log::kAppend ? "ae" : "we");
  if (log == nullptr)
    throw common::DataError(fmt::format("cannot open log file {}: {}", log_file, std::strerror(errno)));
  // Both ends close-on-exec: the child gets the read end as its stdin (dup2 clears the flag
  // there), and no later child inherits the write end, which would hide the end-of-file.
  int pipe_fds[2] = {-1, -1};
  if (stdin_from == Stdin::kPipe && ::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    std::fclose(log);
    throw common::Error(fmt::format("cannot make a stdin pipe for {}: {}", argv.front(), std::strerror(errno)));
  }
  std::FILE* input = stdin_from == Stdin::kPipe ? ::fdopen(pipe_fds[0], "r") : std::fopen("/dev/null", "re");
  std::error_code ec;
  std::vector<std::string> args(argv.begin() + 1, argv.end());
  on_exit_ = std::move(on_exit);
  child_ = bp::child(
      bp::exe = argv.front(), bp::args = args, bp::env = to_bp_environment(env), bp::std_in < input,
      (bp::std_out & bp::std_err) > log, io,
      bp::on_exit =
          [this](int, const std::error_code&) {
            if (abandoned_) return;
            exited_ = true;
            on_exit_(child_.native_exit_code());
          },
      bp::extend::on_exec_setup = ChildSetup{::getpid(), join_cgroup_fd},
      bp::extend::on_success = [](auto& executor) { ::setpgid(executor.pid, executor.pid); }, ec);
  std::fclose(log);
  std::fclose(input);
  stdin_fd_ = pipe_fds[1];
  if (stdin_fd_ >= 0) ::fcntl(stdin_fd_, F_SETFL, O_NONBLOCK);  // a stalled reader must not stall us
  if (ec) {
    close_stdin();
    throw common::Error(fmt::format("cannot start {}: {}", argv.front(), ec.message()));
  }
  pid_ = child_.id();
}

ChildProcess::~ChildProcess() {
  close_stdin();
  if (!exited_) signal_group(SIGKILL);
  child_.detach();  // reaping is the io_context's job; the destructor must not block or throw
}

void ChildProcess::abandon(int wait_status) {
  if (exited_) return;
  exited_ = abandoned_ = true;
  on_exit_(wait_status);
}

void ChildProcess::signal_group(int sig) const {
  if (pid_ > 0) ::kill(-pid_, sig);
}

bool ChildProcess::write_stdin(std::string_view text) {
  while (stdin_fd_ >= 0 && !text.empty()) {
    const ssize_t n = ::write(stdin_fd_, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return true;  // the pipe is full: the reader is slow, not gone
    if (n <= 0) return false;
    text.remove_prefix(static_cast<size_t>(n));
  }
  return stdin_fd_ >= 0;
}

void ChildProcess::close_stdin() {
  if (stdin_fd_ >= 0) ::close(stdin_fd_);
  stdin_fd_ = -1;
}

std::string describe_wait_status(int wait_status) {
  if (WIFEXITED(wait_status)) return fmt::format("exit code {}", WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    int sig = WTERMSIG(wait_status);
    const char* name = sigabbrev_np(sig);
    return fmt::format("signal SIG{} ({})", name != nullptr ? name : "?", sig);
  }
  return fmt::format("wait status {}", wait_status);
}

int shell_exit_status(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

}  // namespace paddle::launcher
