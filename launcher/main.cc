// paddle-launch, as a table of contents. run() takes each job through the launcher's rooms:
//   1. options    the command line (plan/launch_options.h); `status` is a command of its own
//                 (job/status_command.h)
//   2. plan       this node's processes from the options and the host's facts (plan/), shown
//                 as Paddle's launcher shows them (console/plan_report.h); --dispatch hands the
//                 job to the hosts over SSH instead (dispatch/)
//   3. cluster    a multi-node job: the link to the other launchers, which plans each
//                 generation with them (cluster/)
//   4. supervise  the processes started, watched and stopped (supervise/), the job page beside
//                 them (dashboard/)
//   5. report     the exit status, the root cause in launch.log and LOG_DIR/job.json (job/)

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <optional>
#include <random>
#include <thread>

#include "common/error.h"
#include "common/job_token.h"
#include "launcher/cluster/cluster_peers.h"
#include "launcher/console/launch_log.h"
#include "launcher/console/plan_report.h"
#include "launcher/dashboard/dashboard_server.h"
#include "launcher/dispatch/dispatch_plan.h"
#include "launcher/dispatch/dispatcher.h"
#include "launcher/dispatch/node_agent.h"
#include "launcher/job/status_command.h"
#include "launcher/plan/address.h"
#include "launcher/plan/gpu_devices.h"
#include "launcher/plan/launch_options.h"
#include "launcher/plan/launch_plan.h"
#include "launcher/plan/port_reservation.h"
#include "launcher/plan/scheduler_env.h"
#include "launcher/plan/training_command.h"
#include "launcher/supervise/orphan_guard.h"
#include "launcher/supervise/orphan_watchdog.h"
#include "launcher/supervise/supervisor.h"

namespace paddle::launcher {
namespace {

namespace fs = std::filesystem;

void prepare_log_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw common::UsageError(fmt::format("--log_dir: cannot create directory '{}': {}", dir,
                                 ec ? ec.message() : "a file of that name exists"));
  // access(), not a test file made and removed: a launcher makes no file it does not keep.
  if (::access(dir.c_str(), W_OK) != 0)
    throw common::UsageError(fmt::format("--log_dir: directory '{}' is not writable: {}", dir, std::strerror(errno)));
}

// Runs the job with every process it starts marked, so that none outlives it, and with the job
// page up while it runs when --dashboard asks for it.
int supervise_guarded(const LaunchOptions& options, JobPeers& peers, const EnvMap& env, SupervisorOptions supervision,
                      OrphanWatchdog& watchdog, LaunchLog& log) {
  OrphanGuard guard(env, watchdog);
  log.info(fmt::format("orphan guard: {}", guard.describe()));
  supervision.orphan_guard = &guard;
  std::optional<DashboardServer> page;
  if (options.dashboard) {
    page.emplace("127.0.0.1", *options.dashboard, options.log_dir, describe_options(options),
                 options.job_id.value_or("default"), [&peers] { return peers.figures(); });
    log.info(fmt::format("dashboard: {}", page->url()));
  }
  const int status = supervise(peers, env, supervision, log);
  if (page && options.dashboard_linger > 0) {
    log.info(fmt::format("dashboard: the job has ended; {} stays up for {} s (Ctrl-C ends it sooner)", page->url(),
                         options.dashboard_linger));
    std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<long>(options.dashboard_linger * 1000)));
  }
  return status;
}

// A port for a dispatched job's master on host 0, below Linux's ephemeral range, so that two jobs
// dispatched to the same hosts at once do not meet.
int random_master_port() {
  std::random_device random;
  return 20000 + static_cast<int>(random() % 12000);
}

// This launcher's absolute path: a dispatched job tries it on the hosts when paddle-launch is not
// on their PATH. Empty where /proc is not mounted.
std::string own_executable_path() {
  std::error_code error;
  const fs::path path = fs::read_symlink("/proc/self/exe", error);
  return error ? std::string() : path.string();
}

// 1. Options: what the supervisor takes from them (the console's colour comes with the host).
SupervisorOptions supervisor_options(const LaunchOptions& options) {
  SupervisorOptions supervision;
  supervision.max_restarts = options.max_restarts;
  supervision.grace_period = std::chrono::milliseconds(static_cast<long>(options.grace_period * 1000));
  supervision.echo = EchoSelection::parse(options.log_output, options.log_output_prefix);
  return supervision;
}

// Creates DIR and starts `log` there (DIR/launch.log) with the "Configuration Arguments" block.
void start_launch_log(LaunchLog& log, const std::string& dir, const LaunchOptions& options) {
  prepare_log_dir(dir);
  log.attach_file(dir + "/launch.log");
  log.print(configuration_block(options));
}

// 2. Plan: the facts about this machine that planning reads (besides the environment).
void gather_host_facts(HostFacts& host) {
  host.interfaces = local_ipv4_interfaces();
  host.local_addresses = local_ipv4_addresses();
  host.gpu_count = visible_gpu_count(host.env);
  host.cpu_cores = std::max(1u, std::thread::hardware_concurrency());
}

int run(int argc, const char* const argv[]) {
  // 1. Options.
  CommandLine command_line = parse_command_line(argc, argv);
  if (command_line.action != CommandLine::Action::kRun) {
    fmt::print("{}\n", command_line.text);
    return 0;
  }
  LaunchOptions& options = command_line.options;
  SupervisorOptions supervision = supervisor_options(options);
  HostFacts host;
  host.env = common::current_environment();
  supervision.console.colour = console_wants_colour(STDOUT_FILENO, get_env(host.env, "NO_COLOR"));
  if (options.dispatch.requested()) {  // the hosts' launchers take it from here
    const DispatchPlan plan = make_dispatch_plan(options, host.env, random_master_port(), own_executable_path());
    LaunchLog log;
    start_launch_log(log, options.log_dir + "/dispatch", options);
    return dispatch_job(plan, supervision.grace_period, log);
  }

  // A scheduler's nodes share one console and, often, one working directory.
  const std::optional<SchedulerView> scheduler = detect_scheduler(host.env);
  supervision.echo.shared_console = scheduler && scheduler->shares_console;
  // Open MPI's orted gives each rank a pseudo-terminal that ends in mpirun's pipe, not a user's terminal.
  if (supervision.echo.shared_console) supervision.console.colour = false;
  options.log_dir = node_log_dir(scheduler, options.log_dir, std::ranges::any_of(options.given_flags, [](const auto& flag) {
                                   return flag.first == "--log_dir";
                                 }));

  // 2. Plan: the host's facts, the training command, the ports.
  orphan_guard_choice(host.env);  // checked now: the guard itself is made only when processes start
  OrphanWatchdog watchdog;        // forked while this process has one thread: before the agent, the host's facts, the store
  std::optional<NodeAgent> agent;
  if (options.agent) agent.emplace(options, host.env);
  gather_host_facts(host);
  std::vector<std::string> command =
      resolve_training_command(options.training_script, options.training_script_args, host.env);
  PortReservation ports(default_port_lock_dir(get_env(host.env, "TMPDIR").value_or("")));

  // 3. Cluster, through a master: the plan comes from the rendezvous, generation by generation.
  if (auto cluster = cluster_settings(options, host)) {
    if (options.dry_run) throw common::UsageError("--dry_run: a multi-node job's plan needs its rendezvous; drop --master");
    LaunchLog log;
    start_launch_log(log, options.log_dir, options);
    if (agent) agent->watch_dispatcher(log);
    ClusterPeers peers(options, std::move(command), host, ports, std::move(*cluster), log);
    return supervise_guarded(options, peers, host.env, supervision, watchdog, log);  // 4. and 5.
  }

  LaunchPlan plan = make_launch_plan(options, std::move(command), host, ports);
  if (options.dry_run) {
    fmt::print("{}", *options.dry_run == "json" ? dry_run_json(plan) : dry_run_table(plan));
    return 0;
  }
  check_ports_bindable(plan.node_ip, plan.fixed_local_ports,
                       plan.mode == LaunchPlan::Mode::kCollective ? "--start_port"
                       : plan.heter_endpoints.empty()             ? "--servers/--workers/--start_port"
                                                                  : "--servers/--workers/--heter_workers/--start_port");
  LaunchLog log;
  start_launch_log(log, options.log_dir, options);
  if (scheduler)
    log.info(fmt::format("scheduler: {}: {} node(s), this is node {}", scheduler->source, scheduler->nnodes.value_or(1),
                         scheduler->node_rank.value_or(0)));
  // 3. Cluster, by --ips: every node plans alike; their launchers meet at the first of --ips.
  if (plan.mode == LaunchPlan::Mode::kCollective && plan.node_count > 1) {
    std::vector<std::string> mine;
    for (const auto& p : plan.processes) mine.push_back(p.endpoint);
    ClusterSettings settings = ips_cluster_settings(options, plan);
    settings.token = common::JobToken::from_environment(host.env, "the master store");
    ClusterPeers peers(options, plan.command, host, ports, std::move(settings), log, std::move(mine));
    return supervise_guarded(options, peers, host.env, supervision, watchdog, log);  // 4. and 5.
  }
  // 3. Cluster, by --servers/--workers across nodes: the same, with the master on node 0.
  if (plan.mode == LaunchPlan::Mode::kPs && plan.node_count > 1) {
    ClusterSettings settings = ps_lists_cluster_settings(options, plan);
    settings.token = common::JobToken::from_environment(host.env, "the master store");
    ClusterPeers peers(options, host, ports, std::move(settings), log, std::move(plan));
    return supervise_guarded(options, peers, host.env, supervision, watchdog, log);  // 4. and 5.
  }
  // A one-node job's own secret; the nodes of a multi-node job must be given one to share.
  if (!get_env(host.env, "PADDLE_JOB_TOKEN")) host.env["PADDLE_JOB_TOKEN"] = common::JobToken::generate().secret();
  write_endpoints_log(plan);
  announce_plan(plan, log);

  ports.release_sockets();
  // 4. Supervise, and 5. report: the exit status, the root cause and job.json.
  SingleNode peers(plan);
  return supervise_guarded(options, peers, host.env, supervision, watchdog, log);
}

}  // namespace
}  // namespace paddle::launcher

int main(int argc, char* argv[]) {
  const bool status = argc > 1 && std::string_view(argv[1]) == "status";  // paddle-launch status [LOG_DIR]
  // A closed console (`paddle-launch ... | head`) must not kill the launcher and, through the
  // parent-death signal, the whole job. Children get the default disposition back.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    if (status) return paddle::launcher::run_status_command(argc, argv);
    return paddle::launcher::run(argc, argv);
  } catch (const paddle::common::Error& e) {
    fmt::print(stderr, "paddle-launch: error: {}\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    fmt::print(stderr, "paddle-launch: fatal: {}\n", e.what());
    return 1;
  }
}
