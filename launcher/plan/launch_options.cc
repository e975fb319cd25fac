#include "launcher/plan/launch_options.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "common/error.h"
#include "common/parse.h"
#include "launcher/plan/paddle_flags.h"

namespace paddle::launcher {
namespace {

constexpr const char* kUsage = "paddle-launch [options] training_script [training_script_args...]";
constexpr const char* kDispatchGroup = "Dispatch over SSH (start the job on other hosts from here)";

template <typename T>
std::string or_none(const std::optional<T>& value) {
  return value ? fmt::format("{}", *value) : "None";
}

std::string python_bool(bool value) { return value ? "True" : "False"; }

std::string python_list(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const auto& item : items) quoted.push_back(fmt::format("'{}'", item));
  return fmt::format("[{}]", fmt::join(quoted, ", "));
}

void add_dispatch_options(CLI::App& app, DispatchOptions& d) {
  const auto port = CLI::Range(1, 65535);
  app.add_option("--hostfile", d.hostfile,
                 "Start the job on these hosts over SSH: `[user@]host[:port] slots=N` lines; host 0 holds the master")
      ->group(kDispatchGroup);
  app.add_option("--hosts", d.hosts, "The hosts as user@host:port,... (instead of --hostfile)")->group(kDispatchGroup);
  app.add_option("--cluster_conf", d.cluster_conf,
                 "cluster_train's conf.py: HOSTS, ROOT_DIR, PADDLE_NIC, PADDLE_PORT, LD_LIBRARY_PATH")
      ->group(kDispatchGroup);
  app.add_option("--include", d.include, "Only these hosts (host1,host2 or host1@host2)")->group(kDispatchGroup);
  app.add_option("--exclude", d.exclude, "All hosts but these")->group(kDispatchGroup);
  app.add_option("--ssh_opt", d.ssh_opts,
                 "Options for ssh, e.g. \"-o UserKnownHostsFile=F\" or \"-i KEY\"; repeatable. Host keys are checked")
      ->allow_extra_args(false)  // one value per use, so the script after it stays the script
      ->group(kDispatchGroup);
  app.add_option("--job_dispatch_package", d.package,
                 "Copy this directory to ROOT_DIR/JOB on every host (rsync, incremental) and run there")
      ->group(kDispatchGroup);
  app.add_option("--job_workspace", d.workspace, "Run in this directory, already on every host")->group(kDispatchGroup);
  app.add_option("--root_dir", d.root_dir,
                 "Where packages go on the hosts. Default: conf.py's ROOT_DIR, else paddle-jobs in the remote home")
      ->group(kDispatchGroup);
  app.add_option("--env", d.env, "NAME[=VALUE] for every process on every host (NAME alone: from here); repeatable")
      ->allow_extra_args(false)
      ->group(kDispatchGroup);
  app.add_flag("--fetch_logs", d.fetch_logs, "At the end, copy each host's log dir back to LOG_DIR/HOST/")
      ->group(kDispatchGroup);
  app.add_option("--remote_launcher", d.remote_launcher,
                 "paddle-launch's path on the hosts. Default: paddle-launch on their PATH, else this launcher's own path")
      ->group(kDispatchGroup);
  app.add_option("--master_port", d.master_port,
                 "The master's port on host 0. Default: PADDLE_PORT or --start_port less one, else a random one")
      ->check(port)
      ->group(kDispatchGroup);
  app.add_option("--ssh_timeout", d.ssh_timeout, "Seconds ssh may take to connect")
      ->check(CLI::Range(1.0, 600.0))
      ->capture_default_str()
      ->group(kDispatchGroup);
}

}  // namespace

CommandLine parse_command_line(int argc, const char* const argv[], const common::Environment& env) {
  CommandLine result;
  LaunchOptions& o = result.options;

  CLI::App app{std::string("Usage: ") + kUsage + "\n\npaddle-launch: start a distributed training job (collective or parameter-server) "
               "on this node and supervise it.",
               "paddle-launch"};
  app.prefix_command();  // the first positional argument and everything after it is the script's
  app.set_version_flag("--version", kLauncherVersion);
  app.get_formatter()->column_width(34);

  const auto port = CLI::Range(1, 65535);
  app.add_option("--gpus,--devices", o.gpus,
                 "Comma list of GPU ids (relative to CUDA_VISIBLE_DEVICES); one process per id. "
                 "Default: all visible GPUs");
  app.add_option("--nproc_per_node", o.nproc_per_node,
                 "Processes per node. Default: the number of GPUs, else 1")
      ->check(CLI::Range(1, 4096));
  app.add_option("--ips", o.ips, "Comma list of node IPs, the same list on every node")
      ->capture_default_str();
  app.add_option("--host", o.host, "This node's IP. Default: POD_IP, else the local address found in --ips");
  app.add_option("--iface", o.iface,
                 "Network interface for the workers' traffic (GLOO_SOCKET_IFNAME, NCCL_SOCKET_IFNAME). Default, on "
                 "several nodes: the interface holding this node's address");
  app.add_option("--start_port", o.start_port,
                 "First port of deterministic endpoints. Default: FLAGS_START_PORT, else 6070 "
                 "(one node: free ports)")
      ->check(port);
  app.add_option("--log_dir", o.log_dir, "Directory of the per-process logs")->capture_default_str();
  app.add_option("--run_mode", o.run_mode, "collective, ps or ps-heter. Default: chosen from the other flags")
      ->check(CLI::Validator(
          [](std::string& mode) -> std::string {
            return mode == "rpc" ? "rpc, Paddle's RPC mode, is not built into paddle-launch; use collective or "
                                   "parameter-server mode"
                                 : "";
          },
          ""))
      ->check(CLI::IsMember({"collective", "ps", "ps-heter"}));
  app.add_option("--backend", o.backend, "Collective backend: auto, gloo, nccl (GPUs), bkcl (XPUs) or xccl (NPUs)")
      ->check(CLI::IsMember({"auto", "gloo", "nccl", "bkcl", "xccl"}))
      ->capture_default_str();
  app.add_option("--server_num", o.server_num,
                 "PS mode: number of servers on this node (0: a node of a --master job that holds only workers)")
      ->check(CLI::Range(0, 4096));
  app.add_option("--worker_num", o.worker_num,
                 "PS mode: number of workers on this node (0: a node of a --master job that holds only servers)")
      ->check(CLI::Range(0, 4096));
  app.add_option("--servers", o.servers, "PS mode: comma list of server ip:port");
  app.add_option("--workers", o.workers, "PS mode: comma list of worker ip[:port]");
  app.add_option("--heter_worker_num", o.heter_worker_num,
                 "PS heter mode: heter workers per stage on this node, ';' between stages (2, or 1;2)");
  app.add_option("--heter_workers", o.heter_workers,
                 "PS heter mode: each stage's heter workers as ip[:port] comma lists, ';' between stages");
  app.add_option("--heter_devices", o.heter_devices,
                 "PS heter mode: each stage's device type, cpu, gpu or xpu, ';' between stages (HETER_DEVICE_TYPE)");
  app.add_option("--http_port", o.http_port, "Port of the rendezvous key-value store")->check(port);
  app.add_flag("--dry_run{table}", o.dry_run,
               "Print the plan (every process, its role, rank, command and environment) and start "
               "nothing; --dry_run=json prints it as JSON")
      ->check(CLI::IsMember({"table", "json"}));
  app.add_option("--master", o.master,
                 "IP:PORT of the job's master store, where the nodes' launchers meet (PADDLE_MASTER); "
                 "the node with that address hosts it. etcd://HOST:PORT[,HOST:PORT]: meet in etcd instead");
  app.add_option("--nnodes", o.nnodes,
                 "Nodes in the job, with --master (PADDLE_NNODES). MIN:MAX (etcd): elastic; nodes may join and "
                 "leave, and a process exiting 101 restarts the job");
  app.add_option("--rank", o.node_rank, "This node's rank, with --master (PADDLE_RANK). Default: by --ips, else by IP")
      ->check(CLI::Range(0, 99999));
  app.add_option("--job_id", o.job_id, "Names the job in the master's store (PADDLE_JOB_ID). Default: default");
  app.add_option("--rendezvous_timeout", o.rendezvous_timeout, "Seconds to wait for every node at the master")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  app.add_option("--elastic_timeout", o.elastic_timeout,
                 "Seconds an elastic job waits for more nodes once MIN are there, before it starts")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  app.add_option("--max_restarts", o.max_restarts,
                 "On a failure, restart all processes of the job (every node) up to this many times")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_option("--ps_worker_restarts", o.ps_worker_restarts,
                 "PS: restart a failed worker alone, on its node, up to this many times per worker, while the "
                 "servers keep their tables and the other workers go on (PADDLE_PS_WORKER_RESTARTS; default 0)")
      ->check(CLI::Range(0, 1000));
  app.add_option("--grace_period", o.grace_period,
                 "Seconds between SIGTERM and SIGKILL when stopping processes")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--hang_timeout", o.hang_timeout,
                 "Seconds without progress (a step or phase of our runtime, CPU time, output) that make a "
                 "hang: each process's state and stacks go to LOG_DIR/hang.*.txt and the console names the "
                 "culprit (PADDLE_HANG_TIMEOUT; 0: not watched; by default our runtime's processes are "
                 "watched with the larger of 60 s and 10 of their longest steps, other programs not)")
      ->check(CLI::Range(0.0, 86400.0));
  app.add_option("--on_hang", o.on_hang,
                 "What a hang does: report (once), stop (the job, exit 123) or restart (a failure, within "
                 "--max_restarts) (PADDLE_ON_HANG)")
      ->check(CLI::IsMember({"report", "stop", "restart"}))
      ->capture_default_str();
  app.add_option("--straggler_factor", o.straggler_factor,
                 "A rank of our runtime whose busy time per step (not waiting for the others) stays this many "
                 "times the job's median over 30 steps is named a straggler, until it recovers "
                 "(PADDLE_STRAGGLER_FACTOR; 0: not watched)")
      ->check(CLI::Range(0.0, 1000.0))
      ->capture_default_str();
  app.add_option("--log_output", o.log_output,
                 "Whose output the console shows: 0 (default: the first local trainer or worker), all, or a list "
                 "of ranks and servers such as 0,3,server0; every process's output is in its log file");
  app.add_option("--log_output_prefix", o.log_output_prefix,
                 "Start each console line with its process ([trainer 3], [server 0]): auto (when more than one "
                 "is shown), true or false")
      ->check(CLI::IsMember({"auto", "true", "false"}))
      ->capture_default_str();
  app.add_flag("--dashboard{auto}", o.dashboard_flag,
               "Serve the job page on 127.0.0.1:PORT while the job runs (bare --dashboard: any free port; the URL "
               "is printed): state, metrics and curves per rank, log tails, the root cause");
  app.add_option("--dashboard_linger", o.dashboard_linger,
                 "Seconds the job page stays up after the job ends, so that a failure can be read")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  add_dispatch_options(app, o.dispatch);
  PaddleFlagValues paddle;
  add_paddle_flags(app, o, paddle);
  app.add_flag("--agent", o.agent,
               "Run as one node of a job dispatched over SSH: read the environment from stdin (one JSON line), "
               "write ./nodefile, and stop the job when stdin closes or falls silent. The dispatcher passes it");
  app.footer(
      "Examples:\n"
      "  paddle-launch --nproc_per_node=2 train                       # 2 CPU processes (Gloo)\n"
      "  paddle-launch --gpus=0,1 train                               # one process per GPU (NCCL)\n"
      "  paddle-launch --ips=10.0.0.1,10.0.0.2 --gpus=0,1 train       # run on each node\n"
      "  paddle-launch --master=10.0.0.1:8090 --nnodes=2 train        # run on each node\n"
      "  paddle-launch --master=etcd://10.0.0.9:2379 --nnodes=2:4 train  # elastic, on each node\n"
      "  paddle-launch --server_num=1 --worker_num=2 train            # parameter-server mode\n"
      "  paddle-launch --server_num=1 --worker_num=2 --heter_worker_num=2 --heter_devices=gpu prog  # PS heter\n"
      "  paddle-launch --hostfile=hosts --job_dispatch_package=. --nproc_per_node=2 train  # over SSH, from here\n"
      "  paddle-launch --dry_run=json --nproc_per_node=4 train        # show the plan only\n"
      "Logs: LOG_DIR/workerlog.N, LOG_DIR/serverlog.N, LOG_DIR/heterlog.N, LOG_DIR/endpoints.log, LOG_DIR/launch.log");

  const auto usage_error = [](const CLI::ParseError& e) { return common::UsageError(e.what()); };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    result.action = CommandLine::Action::kHelp;
    result.text = app.help();
    return result;
  } catch (const CLI::CallForVersion&) {
    result.action = CommandLine::Action::kVersion;
    result.text = kLauncherVersion;
    return result;
  } catch (const CLI::ParseError& e) {
    throw usage_error(e);
  }

  std::vector<std::string> given;  // on the command line, then by a twin
  for (const CLI::Option* option : app.get_options()) {
    if (option->count() == 0 || option->get_name() == "--help") continue;
    for (const std::string& name : option->get_lnames()) given.push_back("--" + name);
    if (option->get_group() == kDispatchGroup) continue;
    for (const std::string& value : option->results()) o.given_flags.emplace_back(option->get_name(), value);
  }
  const auto was_given = [&given](std::string_view flag) { return std::ranges::find(given, flag) != given.end(); };

  // Each twin set whose setting no flag gave, as its flag; each checked alone first, so that an
  // error names the variable.
  std::vector<std::string> twin_args;
  for (const FlagTwin& twin : flag_twins()) {
    const auto value = get_env(env, std::string(twin.variable));
    if (!value || value->empty()) continue;
    const auto names = same_setting(twin.flag);
    const auto flag_given = std::ranges::find_if(names, was_given);
    if (flag_given != names.end()) {
      o.notices.push_back(fmt::format("{}={} is ignored: {} was given (a flag wins over its variable here; Paddle's "
                                      "launcher would take the variable)",
                                      twin.variable, *value, *flag_given));
      continue;
    }
    if (twin.read_where_used) continue;
    const std::string arg = fmt::format("{}={}", twin.flag, *value);
    try {
      app.clear();
      std::vector<const char*> alone{argv[0], arg.c_str(), "x"};
      app.parse(static_cast<int>(alone.size()), alone.data());
    } catch (const CLI::ParseError& e) {
      throw common::UsageError(fmt::format("{}={}: {}", twin.variable, *value, e.what()));
    }
    twin_args.push_back(arg);
    given.push_back(std::string(twin.flag));
    o.twins_read.push_back(fmt::format("{}={} as {}", twin.variable, *value, twin.flag));
  }
  if (!twin_args.empty()) {
    std::vector<const char*> with_twins{argv[0]};
    for (const auto& arg : twin_args) with_twins.push_back(arg.c_str());
    for (int i = 1; i < argc; ++i) with_twins.push_back(argv[i]);
    app.clear();
    try {
      app.parse(static_cast<int>(with_twins.size()), with_twins.data());
    } catch (const CLI::ParseError& e) {
      throw usage_error(e);
    }
  }
  finish_paddle_flags(o, paddle, was_given, env);

  if (o.dashboard_flag)
    o.dashboard = *o.dashboard_flag == "auto" ? 0 : common::parse_port<common::UsageError>(*o.dashboard_flag, "--dashboard");

  std::vector<std::string> rest = app.remaining();
  if (!rest.empty() && rest.front() == "--") rest.erase(rest.begin());
  if (rest.empty()) throw common::UsageError(std::string("missing training_script (usage: ") + kUsage + ")");
  if (rest.front().starts_with("-"))
    throw common::UsageError("unknown option '" + rest.front() + "' (see --help)");
  o.training_script = rest.front();
  o.training_script_args.assign(rest.begin() + 1, rest.end());
  return result;
}

std::vector<std::pair<std::string, std::string>> describe_options(const LaunchOptions& o) {
  std::vector<std::pair<std::string, std::string>> rows = {
      {"backend", o.backend},
      {"dry_run", or_none(o.dry_run)},
      {"elastic_timeout", fmt::format("{}", o.elastic_timeout)},
      {"gpus", or_none(o.gpus)},
      {"grace_period", fmt::format("{}", o.grace_period)},
      {"hang_timeout", o.hang_timeout ? fmt::format("{}", *o.hang_timeout) : "auto"},
      {"on_hang", o.on_hang},
      {"straggler_factor", fmt::format("{}", o.straggler_factor)},
      {"heter_devices", or_none(o.heter_devices)},
      {"heter_worker_num", or_none(o.heter_worker_num)},
      {"heter_workers", or_none(o.heter_workers)},
      {"host", or_none(o.host)},
      {"iface", or_none(o.iface)},
      {"http_port", or_none(o.http_port)},
      {"ips", o.ips},
      {"log_dir", o.log_dir},
      {"log_output", o.log_output.value_or("0")},
      {"dashboard", or_none(o.dashboard)},
      {"dashboard_linger", fmt::format("{}", o.dashboard_linger)},
      {"log_output_prefix", o.log_output_prefix},
      {"job_id", or_none(o.job_id)},
      {"master", or_none(o.master)},
      {"max_restarts", fmt::format("{}", o.max_restarts)},
      {"nnodes", or_none(o.nnodes)},
      {"rank", or_none(o.node_rank)},
      {"rendezvous_timeout", fmt::format("{}", o.rendezvous_timeout)},
      {"nproc_per_node", or_none(o.nproc_per_node)},
      {"ps_worker_restarts", or_none(o.ps_worker_restarts)},
      {"run_mode", o.run_mode.empty() ? "None" : o.run_mode},
      {"server_num", or_none(o.server_num)},
      {"servers", or_none(o.servers)},
      {"start_port", or_none(o.start_port)},
      {"training_script", o.training_script},
      {"training_script_args", python_list(o.training_script_args)},
      {"worker_num", or_none(o.worker_num)},
      {"workers", or_none(o.workers)},
      {"log_level", o.log_level},
      {"log_overwrite", python_bool(o.log_overwrite)},
      {"sort_ip", python_bool(o.sort_ip)},
      {"elastic_level", fmt::format("{}", o.elastic_level)},
      {"enable_gpu_log", python_bool(o.enable_gpu_log)},
      {"legacy", python_bool(o.legacy)},
      {"with_gloo", or_none(o.with_gloo)},
      {"auto_parallel_config", or_none(o.auto_parallel_config)},
      {"auto_cluster_config", python_bool(o.auto_cluster_config)},
      {"elastic_pre_hook", or_none(o.elastic_pre_hook)},
  };
  if (o.device_kind != DeviceKind::kGpu) rows.emplace_back(o.device_kind == DeviceKind::kXpu ? "xpus" : "npus", or_none(o.gpus));
  if (o.dispatch.requested()) {
    const DispatchOptions& d = o.dispatch;
    rows.insert(rows.end(), {{"cluster_conf", or_none(d.cluster_conf)},
                             {"exclude", d.exclude},
                             {"fetch_logs", d.fetch_logs ? "True" : "False"},
                             {"hostfile", or_none(d.hostfile)},
                             {"hosts", or_none(d.hosts)},
                             {"include", d.include},
                             {"job_dispatch_package", or_none(d.package)},
                             {"job_workspace", or_none(d.workspace)},
                             {"remote_launcher", or_none(d.remote_launcher)},
                             {"root_dir", or_none(d.root_dir)}});
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace paddle::launcher
