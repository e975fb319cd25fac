#include "launcher/dispatch/dispatcher.h"

#include <sys/wait.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/process/search_path.hpp>
#include <csignal>
#include <filesystem>
#include <fmt/format.h>
#include <functional>
#include <memory>
#include <optional>

#include "common/error.h"
#include "common/file.h"
#include "launcher/console/log_echo.h"
#include "launcher/plan/launch_options.h"
#include "launcher/plan/host_names.h"
#include "launcher/supervise/child_process.h"
#include "launcher/supervise/stop_signals.h"

namespace paddle::launcher {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr seconds kHeartbeatInterval{2};  // the agent gives up after 15 s without one
constexpr milliseconds kPollInterval{100};
constexpr seconds kStragglerWait{30};  // after one node ended in failure, for the rest to follow

std::string program_path(const std::string& name) {
  const auto path = boost::process::search_path(name);
  if (path.empty())
    throw common::Error(fmt::format("{} is not installed here (PATH); a dispatched job needs it (scripts/setup.sh installs it)", name));
  return path.string();
}

// One command on one host, run by on_every_host.
struct HostCommand {
  std::unique_ptr<ChildProcess> process;
  std::string output_file;
  std::optional<int> wait_status;
  bool failed() const { return !wait_status || !WIFEXITED(*wait_status) || WEXITSTATUS(*wait_status) != 0; }
};

class Dispatcher {
 public:
  Dispatcher(const DispatchPlan& plan, const EnvMap& env, milliseconds grace, StopSignals& signals, LaunchLog& log)
      : plan_(plan), grace_(grace), log_(log), env_(env),
        ssh_(program_path("ssh")), dir_(fs::path(plan.log_dir) / "dispatch"),
        launchers_(plan.hosts.size()) {
    // Each wait runs io_ in short turns, so a signal is seen within one.
    signal_subscription_ = signals.subscribe([this](int sig) {
      boost::asio::post(io_, [this, sig] {
        ++signal_count_;
        signal_ = sig;
      });
    });
  }

  int run() {
    for (const std::string& note : plan_.notes) log_.warning(fmt::format("--cluster_conf: {}", note));
    log_.info(fmt::format("dispatching job {} to {} host(s): {}; workspace {}", plan_.job_id, plan_.hosts.size(),
                          host_names(), plan_.workspace));
    if (!preflight()) return interrupted_status();
    if (plan_.package && !copy_workspace()) return interrupted_status();
    const std::string master_ip = resolve_master();
    int status = run_agents(master_ip);
    if (plan_.fetch_logs) fetch_logs();
    return status;
  }

 private:
  std::string host_names() const {
    std::string names;
    for (const auto& h : plan_.hosts) names += (names.empty() ? "" : ", ") + h.name();
    return names;
  }

  int interrupted_status() const { return 128 + signal_; }

  // Runs command_of(i) on every host at once, each with its output in LOG_DIR/dispatch/STEP.HOST.log;
  // `stdin_from` kPipe keeps their stdin open (the agents).
  void on_every_host(const std::string& step, const std::function<std::vector<std::string>(size_t)>& command_of,
                     std::vector<HostCommand>& runs, ChildProcess::Stdin stdin_from = ChildProcess::Stdin::kNull) {
    runs.clear();
    runs.resize(plan_.hosts.size());
    for (size_t i = 0; i < runs.size(); ++i) {
      runs[i].output_file = (dir_ / fmt::format("{}{}.log", step.empty() ? "" : step + ".", plan_.host_label(i))).string();
      runs[i].process = std::make_unique<ChildProcess>(
          io_, command_of(i), env_, runs[i].output_file, [&runs, i](int status) { runs[i].wait_status = status; }, stdin_from);
    }
  }

  bool all_done(const std::vector<HostCommand>& runs) const {
    return std::all_of(runs.begin(), runs.end(), [](const HostCommand& r) { return r.wait_status.has_value(); });
  }

  // Waits for every command; a signal stops them (TERM to their groups, KILL after 3 s) and
  // makes it return false.
  bool wait_all(std::vector<HostCommand>& runs, const std::string& what) {
    std::optional<Clock::time_point> kill_at;
    while (!all_done(runs)) {
      io_.run_one_for(kPollInterval);
      if (signal_count_ > 0 && !kill_at) {
        log_.warning(fmt::format("{} interrupted by a signal", what));
        for (auto& r : runs)
          if (!r.wait_status) r.process->signal_group(SIGTERM);
        kill_at = Clock::now() + seconds(3);
      }
      if (kill_at && Clock::now() > *kill_at)
        for (auto& r : runs)
          if (!r.wait_status) r.process->signal_group(SIGKILL);
    }
    return signal_count_ == 0;
  }

  bool preflight() {
    const std::string check = plan_.preflight_command();
    std::vector<HostCommand> runs;
    on_every_host("preflight", [&](size_t i) { return with_ssh(ssh_argv(plan_.hosts[i], plan_.ssh, check)); }, runs);
    if (!wait_all(runs, "preflight; nothing was started")) return false;
    std::vector<std::string> failures;
    for (size_t i = 0; i < runs.size(); ++i) {
      const std::string output = common::read_file(runs[i].output_file).value_or("");
      launchers_[i] = launcher_found(output).value_or(plan_.remote_launchers.front());
      if (!runs[i].failed() && plan_.remote_launchers.size() > 1 && launchers_[i] == plan_.remote_launchers.back())
        log_.info(fmt::format("host {}: paddle-launch is not on its PATH; running {}", plan_.hosts[i].name(), launchers_[i]));
      if (runs[i].failed()) {
        failures.push_back(fmt::format("host {} ({}): {}", plan_.hosts[i].name(), describe(runs[i]), ssh_reason(output)));
      } else if (const std::string version = ssh_reason(output); version != kLauncherVersion) {
        log_.warning(fmt::format("host {} runs {}, this is {}", plan_.hosts[i].name(), version, kLauncherVersion));
      }
    }
    if (!failures.empty()) {
      for (const auto& f : failures) fmt::print(stderr, "paddle-launch: error: preflight: {}\n", f);
      throw common::Error(fmt::format("preflight failed on {} of {} host(s); nothing was started on any host",
                                      failures.size(), plan_.hosts.size()),
                          kExitHostUnreachable);
    }
    log_.info(fmt::format("preflight: {} host(s) reachable", plan_.hosts.size()));
    return true;
  }

  bool copy_workspace() {
    const auto started = Clock::now();
    log_.info(fmt::format("copying {} to {} on every host (rsync)", *plan_.package, plan_.workspace));
    const std::string rsync = program_path("rsync");
    std::vector<HostCommand> runs;
    on_every_host("copy", [&](size_t i) {
      auto argv = rsync_push_argv(plan_.hosts[i], plan_.ssh, *plan_.package, plan_.workspace, plan_.not_copied);
      argv.front() = rsync;
      return argv;
    }, runs);
    if (!wait_all(runs, "copying the workspace; nothing was started")) return false;
    std::vector<std::string> failures;
    for (size_t i = 0; i < runs.size(); ++i)
      if (runs[i].failed())
        failures.push_back(fmt::format("host {} ({}): {}", plan_.hosts[i].name(), describe(runs[i]),
                                       ssh_reason(common::read_file(runs[i].output_file).value_or(""))));
    if (!failures.empty()) {
      for (const auto& f : failures) fmt::print(stderr, "paddle-launch: error: copy: {}\n", f);
      throw common::Error(fmt::format("copying the workspace failed on {} of {} host(s); nothing was started",
                                      failures.size(), plan_.hosts.size()),
                          kExitHostUnreachable);
    }
    log_.info(fmt::format("copied the workspace to {} host(s) in {:.2f}s", plan_.hosts.size(),
                          std::chrono::duration<double>(Clock::now() - started).count()));
    return true;
  }

  std::string resolve_master() const {
    const std::string& host = plan_.hosts.front().host;
    if (auto ip = resolve_ipv4(host)) return *ip;
    throw common::Error(fmt::format("host 0 ({}) has no IPv4 address here; the other hosts must reach the job's master there",
                                    plan_.hosts.front().name()),
                        kExitHostUnreachable);
  }

  int run_agents(const std::string& master_ip) {
    std::vector<HostCommand> runs;
    on_every_host("", [&](size_t i) { return with_ssh(ssh_argv(plan_.hosts[i], plan_.ssh, plan_.agent_command(i, master_ip, launchers_[i]))); },
                  runs, ChildProcess::Stdin::kPipe);
    const std::string environment = nlohmann::json{{"env", plan_.agent_env}}.dump() + "\n";
    for (auto& r : runs) r.process->write_stdin(environment);
    log_.info(fmt::format("started the job on {} host(s), the master at {}:{}; each host's console is in {}/HOST.log",
                          runs.size(), master_ip, plan_.master_port, dir_.string()));

    LogEcho echo(runs.front().output_file, stdout, fmt::format("[{}] ", plan_.host_label(0)));
    auto next_beat = Clock::now() + kHeartbeatInterval;
    std::optional<Clock::time_point> stop_by;     // the agents were asked to stop; ssh is ended after
    std::optional<Clock::time_point> stragglers;  // a node failed; the rest should follow by then
    int signals_seen = 0;
    while (!all_done(runs)) {
      io_.run_one_for(kPollInterval);
      echo.poll();
      const auto now = Clock::now();
      if (now >= next_beat) {
        for (auto& r : runs)
          if (!r.wait_status) r.process->write_stdin("\n");
        next_beat = now + kHeartbeatInterval;
      }
      if (signal_count_ > signals_seen) {
        signals_seen = signal_count_;
        if (signals_seen == 1) {
          log_.warning(fmt::format("received {}; stopping the job on every host", stop_signal_name(signal_)));
          stop_by = stop_agents(runs, now);
        } else {
          log_.warning("second signal: ending every ssh session now");
          end_sessions(runs, SIGKILL);
        }
      }
      if (!stragglers && !stop_by)
        for (size_t i = 0; i < runs.size(); ++i)
          if (runs[i].wait_status && runs[i].failed()) {
            stragglers = now + grace_ + kStragglerWait;
            if (WIFEXITED(*runs[i].wait_status) && WEXITSTATUS(*runs[i].wait_status) == kExitHostUnreachable)
              log_.error(fmt::format("lost the ssh session to host {}: {}; its agent stops the job there", plan_.hosts[i].name(),
                                     ssh_reason(common::read_file(runs[i].output_file).value_or(""))));
            break;
          }
      if (stragglers && !stop_by && now > *stragglers) {
        log_.warning(fmt::format("the job failed, yet some hosts still run it {}s later; stopping them", kStragglerWait.count()));
        stop_by = stop_agents(runs, now);
      }
      if (stop_by && now > *stop_by) {
        log_.warning("some agents did not stop in time; ending their ssh sessions");
        end_sessions(runs, SIGTERM);
        stop_by = now + seconds(3);
        grace_ = milliseconds(0);
      }
    }
    echo.finish();
    return job_status(runs);
  }

  Clock::time_point stop_agents(std::vector<HostCommand>& runs, Clock::time_point now) {
    for (auto& r : runs) r.process->close_stdin();
    return now + grace_ + seconds(10);
  }

  void end_sessions(std::vector<HostCommand>& runs, int sig) {
    for (auto& r : runs)
      if (!r.wait_status) r.process->signal_group(sig);
  }

  int job_status(const std::vector<HostCommand>& runs) {
    std::string summary;
    for (size_t i = 0; i < runs.size(); ++i)
      summary += fmt::format("{}{}: {}", i ? ", " : "", plan_.hosts[i].name(), describe(runs[i]));
    int status = 0;
    const int first = shell_exit_status(*runs.front().wait_status);
    if (first != 0 && first != kExitHostUnreachable) status = first;
    for (size_t i = 0; i < runs.size() && status == 0; ++i)
      if (int s = shell_exit_status(*runs[i].wait_status); s != 0 && s != kExitHostUnreachable) status = s;
    if (status == 0 && first != 0) status = first;
    if (status == 0 && std::any_of(runs.begin(), runs.end(), [](const HostCommand& r) { return r.failed(); }))
      status = kExitHostUnreachable;
    if (signal_count_ > 0) status = interrupted_status();
    if (status == 0) log_.info(fmt::format("the job succeeded on every host ({})", summary));
    else log_.error(fmt::format("the job ended with status {}; the hosts: {}", status, summary));
    return status;
  }

  void fetch_logs() {
    const std::string rsync = program_path("rsync");
    std::vector<HostCommand> runs;
    on_every_host("fetch", [&](size_t i) {
      const std::string remote = fs::path(plan_.remote_log_dir).is_absolute()
                                     ? plan_.remote_log_dir
                                     : (fs::path(plan_.workspace) / plan_.remote_log_dir).string();
      auto argv = rsync_pull_argv(plan_.hosts[i], plan_.ssh, remote, (fs::path(plan_.log_dir) / plan_.host_label(i)).string());
      argv.front() = rsync;
      return argv;
    }, runs);
    signal_count_ = 0;  // the job is over; a signal now only ends the copy
    wait_all(runs, "fetching the logs");
    for (size_t i = 0; i < runs.size(); ++i)
      if (runs[i].failed())
        log_.warning(fmt::format("--fetch_logs: host {}: {}", plan_.hosts[i].name(), ssh_reason(common::read_file(runs[i].output_file).value_or(""))));
    log_.info(fmt::format("--fetch_logs: each host's {} is in {}/HOST/", plan_.remote_log_dir, plan_.log_dir));
  }

  std::vector<std::string> with_ssh(std::vector<std::string> argv) const {
    argv.front() = ssh_;
    return argv;
  }

  static std::string describe(const HostCommand& r) {
    return r.wait_status ? describe_wait_status(*r.wait_status) : "still running";
  }

  const DispatchPlan& plan_;
  milliseconds grace_;
  LaunchLog& log_;
  EnvMap env_;
  boost::asio::io_context io_;
  // Between steps nothing is pending on io_; run_one_for() would then leave it stopped, and the
  // next step's processes' exits would never be heard.
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> keep_running_ = boost::asio::make_work_guard(io_);
  int signal_count_ = 0;
  int signal_ = 0;
  std::string ssh_;
  fs::path dir_;
  std::vector<std::string> launchers_;  // per host: where the preflight found the launcher
  // Last: it ends, and with it any call from the signals' thread, before io_ goes.
  StopSignals::Subscription signal_subscription_;
};

}  // namespace

int dispatch_job(const DispatchPlan& plan, const EnvMap& env, std::chrono::milliseconds grace_period, StopSignals& signals,
                 LaunchLog& log) {
  return Dispatcher(plan, env, grace_period, signals, log).run();
}

}  // namespace paddle::launcher
