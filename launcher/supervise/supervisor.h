#pragma once
// Supervisor: starts the plan's processes and watches them until the job ends.
//
//  - Collective: all exit 0 -> 0. PS: when every worker of the job (every node's, in a
//    multi-node job) has exited 0 the servers are stopped and the job succeeds.
//  - The first failure stops the rest (SIGTERM to each process group, SIGKILL after the grace
//    period), is reported with its role, rank, status, log file and last lines, and its status
//    becomes the launcher's (128 + signal for a signal).
//  - With max_restarts > 0 a failed attempt is stopped and started again, keeping the earlier
//    logs as LOG.attemptK, with PADDLE_RESTART_COUNT set to the attempt number.
//  - PS with ps_worker_restarts > 0: a worker that fails is started again alone, appending to
//    its log, with PADDLE_PS_WORKER_RESTART_COUNT set and the progress file it keeps
//    (PADDLE_PS_WORKER_PROGRESS, runtime/train/workloads/worker_progress.h) to take up its part from. One
//    that fails past its count, or exits 75 (it cannot take up its part alone), fails the job.
//  - SIGINT/SIGTERM (from StopSignals) stop everything the same way and give 130/143; a second
//    signal kills at once. One that comes while the node waits between runs (the rendezvous of
//    a generation, the master's wait for the other nodes to finish) ends that wait (Stopped).
//  - In a multi-node job (JobPeers) the nodes act as one: a failure on any node stops every
//    node's processes, each node prints the job's one root cause and exits with its status,
//    and restarts are generations of the whole job, started together. In an elastic job a
//    change of its nodes starts the next generation without counting against max_restarts.

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "launcher/console/console_echo.h"
#include "launcher/console/echo_selection.h"
#include "launcher/console/launch_log.h"
#include "launcher/plan/environment.h"
#include "launcher/plan/launch_plan.h"
#include "launcher/supervise/control_plane_figures.h"
#include "launcher/supervise/job_failure.h"
#include "launcher/supervise/straggler_watch.h"

namespace paddle::launcher {

class OrphanGuard;
class StopSignals;

struct SupervisorOptions {
  const OrphanGuard* orphan_guard = nullptr;  // marks the processes; stops what they leave behind
  StopSignals* stop_signals = nullptr;        // SIGINT and SIGTERM (stop_signals.h); none: not watched
  int max_restarts = 0;
  // PS: a worker that fails is restarted alone, on its node, up to this many times
  // (--ps_worker_restarts), while the servers keep their tables and the other workers go on.
  int ps_worker_restarts = 0;
  std::chrono::milliseconds grace_period{5000};
  bool append_logs = false;    // --log_overwrite=False: every start goes on in its log
  // --hang_timeout (nothing: automatic, for our runtime's processes; 0: not watched) and
  // --on_hang: what a job that stops making progress does (hang_watch.h): report it once, stop
  // (exit 123), or fail for the restart policy.
  std::optional<std::chrono::milliseconds> hang_timeout;
  enum class OnHang { kReport, kStop, kRestart } on_hang = OnHang::kReport;
  // --straggler_factor (straggler_watch.h); 0: not watched.
  double straggler_factor = 2.0;
  std::optional<std::string> pre_start_hook;  // --elastic_pre_hook: a shell command before each start
  EchoSelection echo;          // whose output the console shows (--log_output)
  ConsoleEchoOptions console;
};

// The rest of the job beyond this node, as the supervisor sees it. A one-node job has no peers
// (SingleNode); a multi-node job meets them at the master (cluster_peers.h).
class JobPeers {
 public:
  virtual ~JobPeers() = default;
  // The plan of generation G (0, then one more per restart), after `restarts_used` restarts
  // of --max_restarts. A node joining a running elastic job gets the job's generation and
  // count instead (the plan's generation and restarts_used).
  virtual const LaunchPlan& plan(int generation, int restarts_used) = 0;
  // This node's part of G failed, or its launcher was signalled; returns the job's root cause.
  virtual JobFailure report(int generation, const JobFailure& failure) = 0;
  // The job's root cause once another node reported it; polled while the processes run.
  virtual std::optional<JobFailure> failure_elsewhere() = 0;
  // This node's processes of G all succeeded; returns a failure reported meanwhile elsewhere.
  virtual std::optional<JobFailure> finish(int generation) = 0;
  // The job's root cause of G's end, once every node has had its say; `provisional` is the
  // failure this node knows of. Gives up waiting, with what it has, as soon as `interrupted()`
  // says this launcher was signalled (a scheduler stopping the job signals every node at once,
  // and the master's store may be gone).
  virtual JobFailure verdict(int generation, const JobFailure& provisional, const std::function<bool()>& interrupted) = 0;
  // PS: this node's workers of G have all exited 0 (or it has none); whether every node's have,
  // so that the servers may stop.
  virtual void workers_done(int) {}
  virtual bool job_workers_done(int) { return true; }
  // Why the job goes on to its next generation without counting a restart (an elastic job's
  // nodes changed), or nothing.
  virtual std::optional<std::string> membership_change(const JobFailure&) { return std::nullopt; }
  // The control plane's figures now, for the job page; asked from the page's thread.
  virtual ControlPlaneFigures figures() { return {}; }
  // A hang found on this node (cluster/hang_exchange.h): its findings go to the launcher that
  // judges, whose verdict over every node's comes back from job_hang(). A one-node job judges its
  // own (spans_nodes() false).
  virtual bool spans_nodes() const { return false; }
  virtual void share_hang(int /*generation*/, const std::string& /*findings*/) {}
  virtual std::optional<nlohmann::json> job_hang() { return std::nullopt; }
  // A straggler's change on this node (straggler_watch.h) goes to the launcher that judges, which
  // shows the other nodes' from straggler_news(): those heard since the last call.
  virtual void share_straggler(int /*generation*/, const StragglerNews& /*news*/) {}
  virtual std::vector<StragglerNews> straggler_news() { return {}; }
};

class SingleNode : public JobPeers {
 public:
  explicit SingleNode(const LaunchPlan& plan) : plan_(plan) {}
  const LaunchPlan& plan(int, int) override { return plan_; }
  JobFailure report(int, const JobFailure& failure) override { return failure; }
  std::optional<JobFailure> failure_elsewhere() override { return std::nullopt; }
  std::optional<JobFailure> finish(int) override { return std::nullopt; }
  JobFailure verdict(int, const JobFailure& provisional, const std::function<bool()>&) override { return provisional; }

 private:
  const LaunchPlan& plan_;
};

// Runs the job; returns the launcher's exit status.
int supervise(JobPeers& peers, const EnvMap& launcher_env, const SupervisorOptions& options, LaunchLog& log);

}  // namespace paddle::launcher
