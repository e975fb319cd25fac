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
#include <fmt/ranges.h>
#include <optional>
#include <random>
#include <thread>

#include "common/environment.h"
#include "common/error.h"
#include "common/wait.h"
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
#include "launcher/plan/host_names.h"
#include "launcher/plan/launch_options.h"
#include "launcher/plan/launch_plan.h"
#include "launcher/plan/port_reservation.h"
#include "launcher/plan/scheduler_env.h"
#include "launcher/plan/training_command.h"
#include "launcher/supervise/gpu_log.h"
#include "launcher/supervise/orphan_guard.h"
#include "launcher/supervise/orphan_watchdog.h"
#include "launcher/supervise/stop_signals.h"
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

// Whether this node's processes get GPUs: --gpus/--devices given, or GPUs visible.
bool uses_gpus(const LaunchOptions& options, const HostFacts& host) {
  if (options.device_kind != DeviceKind::kGpu) return false;
  return options.gpus.has_value() || host.gpu_count > 0;
}

// Runs the job with every process it starts marked, so that none outlives it, and with the job
// page up while it runs when --dashboard asks for it.
int supervise_guarded(const LaunchOptions& options, JobPeers& peers, const HostFacts& host, SupervisorOptions supervision,
                      OrphanWatchdog& watchdog, LaunchLog& log) {
  const EnvMap& env = host.env;
  OrphanGuard guard(env, watchdog);
  log.info(fmt::format("orphan guard: {}", guard.describe()));
  supervision.orphan_guard = &guard;
  std::optional<DashboardServer> page;
  if (options.dashboard) {
    page.emplace("127.0.0.1", *options.dashboard, options.log_dir, describe_options(options),
                 options.job_id.value_or("default"), [&peers] { return peers.figures(); });
    log.info(fmt::format("dashboard: {}", page->url()));
  }
  std::optional<GpuLog> gpu_log;
  if (options.enable_gpu_log && uses_gpus(options, host)) {
    gpu_log.emplace(fmt::format("{}/{}.gpu.log", options.log_dir, options.job_id.value_or(get_env(env, "PADDLE_JOB_ID").value_or("default"))),
                    env);
    log.info(fmt::format("GPU figures every 5 s in {} (--enable_gpu_log)", gpu_log->path()));
  }
  const int status = supervise(peers, env, supervision, log);
  if (page && options.dashboard_linger > 0) {
    log.info(fmt::format("dashboard: the job has ended; {} stays up for {} s (Ctrl-C ends it sooner)", page->url(),
                         options.dashboard_linger));
    common::sleep_for(std::chrono::milliseconds(static_cast<long>(options.dashboard_linger * 1000)),
                      supervision.stop_signals->stop_token());
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
  supervision.append_logs = supervision.console.logs_go_on = !options.log_overwrite;
  if (options.hang_timeout)
    supervision.hang_timeout = std::chrono::milliseconds(static_cast<long>(*options.hang_timeout * 1000));
  supervision.on_hang = options.on_hang == "stop"      ? SupervisorOptions::OnHang::kStop
                        : options.on_hang == "restart" ? SupervisorOptions::OnHang::kRestart
                                                       : SupervisorOptions::OnHang::kReport;
  supervision.straggler_factor = options.straggler_factor;
  supervision.pre_start_hook = options.elastic_pre_hook;
  return supervision;
}

// Creates DIR and starts `log` there (DIR/launch.log) with the "Configuration Arguments" block,
// and the addresses the host names given stand for.
void start_launch_log(LaunchLog& log, const std::string& dir, const LaunchOptions& options,
                      const std::vector<std::string>& resolved_names = {}) {
  prepare_log_dir(dir);
  log.attach_file(dir + "/launch.log");
  log.set_console_level(options.log_level);
  log.print(configuration_block(options));
  for (const std::string& twin : options.twins_read) log.debug(fmt::format("read {}", twin));
  for (const std::string& notice : options.notices) log.warning(notice);
  if (options.legacy) log.info(fmt::format("the legacy launcher's worker contract (paddle.distributed.fleet.launch): {}", options.legacy_reason));
  if (!resolved_names.empty()) log.info(fmt::format("host names: {}", fmt::join(resolved_names, ", ")));
}

// 2. Plan: the facts about this machine that planning reads (besides the environment).
void gather_host_facts(HostFacts& host) {
  host.interfaces = local_ipv4_interfaces();
  host.local_addresses = local_ipv4_addresses();
  host.gpu_count = visible_gpu_count(host.env);
  host.cpu_cores = std::max(1u, std::thread::hardware_concurrency());
  std::random_device random;  // POD_NAME: six letters, as Paddle names a pod
  for (int i = 0; i < 6; ++i) host.pod_name += static_cast<char>('a' + random() % 26);
}

// What a run carries from step to step: the options, what the supervisor takes from them, the
// host's facts and the scheduler it runs under, if any.
struct Run {
  LaunchOptions options;
  SupervisorOptions supervision;
  HostFacts host;
  std::optional<SchedulerView> scheduler;
  std::optional<HostNameResolver> names;  // every host name given, and the scheduler's nodes
};

// 2. Names: every address given as a host name (flags, PADDLE_MASTER, POD_IP) becomes its IPv4
// address before planning, waited for up to the rendezvous timeout; the same resolver takes the
// scheduler's nodes once the flags are checked against the scheduler (cluster_settings).
void resolve_names(Run& run, const StopSignals& signals) {
  HostNameResolver::Settings settings;
  settings.patience = std::chrono::milliseconds(static_cast<long>(run.options.rendezvous_timeout * 1000));
  settings.stop = signals.stop_token();
  settings.stopped = [&signals](const std::string& waiting_for) { signals.throw_if_stopped(waiting_for); };
  HostNameResolver& resolver = run.names.emplace(std::move(settings));
  resolve_host_names(run.options, run.host.env, resolver);
}

// "name=ip" for each host name resolved so far.
std::vector<std::string> resolved_names(const Run& run) { return run.names ? run.names->resolved() : std::vector<std::string>{}; }

// 1. Options, read against the environment: the console's colour, and under a scheduler, whose
// nodes share one console and often one working directory, its node's own log folder.
Run read_options(LaunchOptions options, common::Environment env) {
  Run run;
  run.options = std::move(options);
  run.supervision = supervisor_options(run.options);
  run.host.env = std::move(env);
  run.supervision.ps_worker_restarts = run.options.ps_worker_restarts.value_or(0);
  run.supervision.console.colour = console_wants_colour(STDOUT_FILENO, get_env(run.host.env, "NO_COLOR"));
  if (run.options.dispatch.requested()) return run;
  run.scheduler = detect_scheduler(run.host.env);
  if (run.scheduler && run.scheduler->nproc_per_node && !run.options.nproc_per_node)  // PET_NPROC_PER_NODE
    run.options.nproc_per_node = run.scheduler->nproc_per_node;
  run.supervision.echo.shared_console = run.scheduler && run.scheduler->shares_console;
  // Open MPI's orted gives each rank a pseudo-terminal that ends in mpirun's pipe, not a user's terminal.
  if (run.supervision.echo.shared_console) run.supervision.console.colour = false;
  const bool log_dir_given = std::ranges::any_of(run.options.given_flags, [](const auto& f) { return f.first == "--log_dir"; });
  run.options.log_dir = node_log_dir(run.scheduler, run.options.log_dir, log_dir_given);
  return run;
}

// --dispatch: the job goes to the hosts over SSH, whose launchers take it from there.
int dispatch(const Run& run) {
  const DispatchPlan plan = make_dispatch_plan(run.options, run.host.env, random_master_port(), own_executable_path());
  LaunchLog log;
  start_launch_log(log, run.options.log_dir + "/dispatch", run.options);
  return dispatch_job(plan, run.host.env, run.supervision.grace_period, *run.supervision.stop_signals, log);
}

// 3. through a master: the plan comes from the rendezvous, generation by generation.
int run_through_master(Run& run, std::vector<std::string> command, PortReservation& ports, ClusterSettings cluster,
                       std::optional<NodeAgent>& agent, OrphanWatchdog& watchdog) {
  if (run.options.dry_run) throw common::UsageError("--dry_run: a multi-node job's plan needs its rendezvous; drop --master");
  LaunchLog log;
  start_launch_log(log, run.options.log_dir, run.options, resolved_names(run));
  if (agent) agent->watch_dispatcher(log);
  cluster.stop_signals = run.supervision.stop_signals;
  ClusterPeers peers(run.options, std::move(command), run.host, ports, std::move(cluster), log);
  return supervise_guarded(run.options, peers, run.host, run.supervision, watchdog, log);  // 4. and 5.
}

// 3. and 4. A plan of its own: the nodes of --ips or of the PS lists meet at the first of them;
// a one-node job starts at once.
int run_plan(Run& run, LaunchPlan plan, PortReservation& ports, OrphanWatchdog& watchdog) {
  const LaunchOptions& options = run.options;
  check_ports_bindable(plan.node_ip, plan.fixed_local_ports,
                       plan.mode == LaunchPlan::Mode::kCollective ? "--start_port"
                       : plan.heter_endpoints.empty()             ? "--servers/--workers/--start_port"
                                                                  : "--servers/--workers/--heter_workers/--start_port");
  LaunchLog log;
  start_launch_log(log, options.log_dir, options, resolved_names(run));
  if (run.scheduler)
    log.info(fmt::format("scheduler: {}: {} node(s), this is node {}", run.scheduler->source,
                         run.scheduler->nnodes.value_or(1), run.scheduler->node_rank.value_or(0)));
  if (plan.mode == LaunchPlan::Mode::kCollective && plan.node_count > 1) {  // --ips
    std::vector<std::string> mine;
    for (const auto& p : plan.processes) mine.push_back(p.endpoint);
    ClusterSettings settings = ips_cluster_settings(options, plan);
    settings.token = common::JobToken::from_environment(run.host.env, "the master store");
    settings.stop_signals = run.supervision.stop_signals;
    ClusterPeers peers(options, plan.command, run.host, ports, std::move(settings), log, std::move(mine));
    return supervise_guarded(options, peers, run.host, run.supervision, watchdog, log);
  }
  if (plan.mode == LaunchPlan::Mode::kPs && plan.node_count > 1) {  // --servers/--workers across nodes
    ClusterSettings settings = ps_lists_cluster_settings(options, plan);
    settings.token = common::JobToken::from_environment(run.host.env, "the master store");
    settings.stop_signals = run.supervision.stop_signals;
    ClusterPeers peers(options, run.host, ports, std::move(settings), log, std::move(plan));
    return supervise_guarded(options, peers, run.host, run.supervision, watchdog, log);
  }
  // A one-node job's own secret; the nodes of a multi-node job must be given one to share.
  if (!get_env(run.host.env, "PADDLE_JOB_TOKEN"))
    run.host.env["PADDLE_JOB_TOKEN"] = common::JobToken::generate().secret();
  write_endpoints_log(plan);
  announce_plan(plan, log);
  ports.release_sockets();
  SingleNode peers(plan);
  return supervise_guarded(options, peers, run.host, run.supervision, watchdog, log);  // 4. and 5.
}

int run(int argc, const char* const argv[]) {
  common::Environment env = common::current_environment();  // once: every step reads this copy
  CommandLine command_line = parse_command_line(argc, argv, env);
  if (command_line.action != CommandLine::Action::kRun) {
    fmt::print("{}\n", command_line.text);
    return 0;
  }
  if (command_line.options.dry_run)  // no launch log: the notices go to the console alone
    for (const std::string& notice : command_line.options.notices) fmt::print(stderr, "paddle-launch: warning: {}\n", notice);
  Run run = read_options(std::move(command_line.options), std::move(env));  // 1.
  if (run.options.dispatch.requested()) {
    StopSignals signals;
    run.supervision.stop_signals = &signals;
    return dispatch(run);
  }

  // 2. Plan: the host's facts, the training command, the ports.
  orphan_guard_choice(run.host.env);  // checked now: the guard itself is made only when processes start
  OrphanWatchdog watchdog;  // forked while this process has one thread: before the agent, the host's facts, the store
  StopSignals signals;      // the first thread besides this one: every later thread leaves the signals to it
  run.supervision.stop_signals = &signals;
  std::optional<NodeAgent> agent;
  if (run.options.agent) agent.emplace(run.options, run.host.env);
  gather_host_facts(run.host);
  resolve_names(run, signals);
  std::vector<std::string> command =
      resolve_training_command(run.options.training_script, run.options.training_script_args, run.host.env);
  PortReservation ports(default_port_lock_dir(get_env(run.host.env, "TMPDIR").value_or("")));
  if (auto cluster = cluster_settings(run.options, run.host, run.scheduler, &*run.names))
    return run_through_master(run, std::move(command), ports, std::move(*cluster), agent, watchdog);  // 3.
  LaunchPlan plan = make_launch_plan(run.options, std::move(command), run.host, ports);
  if (run.options.dry_run) {
    fmt::print("{}", *run.options.dry_run == "json" ? dry_run_json(plan) : dry_run_table(plan));
    return 0;
  }
  return run_plan(run, std::move(plan), ports, watchdog);  // 3. and 4.
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
  } catch (const paddle::launcher::Stopped& e) {
    fmt::print(stderr, "paddle-launch: {}\n", e.what());
    return e.exit_code();
  } catch (const paddle::common::Error& e) {
    fmt::print(stderr, "paddle-launch: error: {}\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    fmt::print(stderr, "paddle-launch: fatal: {}\n", e.what());
    return 1;
  }
}
