#pragma once
// LaunchOptions: what the user asked for on the command line, syntax-checked.
// Checks that need the machine (interfaces, GPUs, files, ports) belong to planning.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/environment.h"

namespace paddle::launcher {

inline constexpr const char* kLauncherVersion = "paddle-launch 0.1.0";  // what --version prints

// Dispatch over SSH (dispatch/dispatcher.h): this launcher starts the job on other hosts.
struct DispatchOptions {
  std::optional<std::string> hostfile;      // --hostfile: DeepSpeed's `host slots=N` lines
  std::optional<std::string> hosts;         // --hosts: user@host:port,...
  std::optional<std::string> cluster_conf;  // --cluster_conf: cluster_train's conf.py
  std::string include, exclude;             // host names, `,` or `@` separated
  std::vector<std::string> ssh_opts;        // --ssh_opt, each split at spaces into ssh arguments
  std::optional<std::string> package;       // --job_dispatch_package: a local dir copied to every host
  std::optional<std::string> workspace;     // --job_workspace: a dir already on every host
  std::optional<std::string> root_dir;      // --root_dir: where packages go on the hosts
  std::vector<std::string> env;             // --env NAME[=VALUE]
  bool fetch_logs = false;
  std::optional<std::string> remote_launcher;  // --remote_launcher; else paddle-launch on PATH, then our own path
  std::optional<int> master_port;
  double ssh_timeout = 10;  // seconds: ssh's ConnectTimeout

  bool requested() const { return hostfile || hosts || cluster_conf; }
};

// The accelerator the device ids of --gpus/--devices, --xpus or --npus name (plan/gpu_devices.h).
enum class DeviceKind { kGpu, kXpu, kNpu };

struct LaunchOptions {
  std::optional<std::string> gpus;  // --gpus / --devices / --xpus / --npus, as typed
  DeviceKind device_kind = DeviceKind::kGpu;
  std::optional<int> nproc_per_node;
  std::string ips = "127.0.0.1";
  std::optional<std::string> host;
  std::optional<std::string> iface;  // --iface: the workers' GLOO_/NCCL_SOCKET_IFNAME
  std::optional<int> start_port;
  std::string log_dir = "log";
  std::string run_mode;  // "", "collective", "ps" or "ps-heter"
  std::string backend = "auto";
  std::optional<int> server_num;
  std::optional<int> worker_num;
  std::optional<std::string> servers;
  std::optional<std::string> workers;
  // PS heter mode (plan/heter_stages.h): stages ';'-separated, as Paddle's fleet launcher takes them.
  std::optional<std::string> heter_worker_num;  // "2", or "1;2": heter workers per stage
  std::optional<std::string> heter_workers;     // "ip[:port],...;ip[:port],..."
  std::optional<std::string> heter_devices;     // "cpu;gpu": each stage's HETER_DEVICE_TYPE
  std::optional<int> http_port;
  std::optional<std::string> dry_run;  // "table" or "json"
  std::optional<std::string> master;  // --master IP:PORT (PADDLE_MASTER)
  std::optional<std::string> nnodes;  // --nnodes N or MIN:MAX (PADDLE_NNODES)
  std::optional<int> node_rank;       // --rank (PADDLE_RANK)
  std::optional<std::string> job_id;  // --job_id (PADDLE_JOB_ID)
  double rendezvous_timeout = 300;
  double elastic_timeout = 30;
  int max_restarts = 0;
  std::optional<int> ps_worker_restarts;  // --ps_worker_restarts; unset: PADDLE_PS_WORKER_RESTARTS, else 0
  double grace_period = 5.0;
  // --hang_timeout: seconds without progress that make a hang; 0: not watched; nothing: automatic,
  // for our runtime's processes (supervise/hang_watch.h)
  std::optional<double> hang_timeout;
  std::string on_hang = "report";     // --on_hang: report, stop or restart
  // --straggler_factor: a rank whose busy time per step stays this many times the job's median is
  // flagged (supervise/straggler_watch.h); 0: not watched
  double straggler_factor = 2.0;
  std::optional<std::string> log_output;  // --log_output: 0 (unset), all, or 0,3,server0
  std::string log_output_prefix = "auto";
  std::optional<int> dashboard;  // --dashboard[=PORT]: the job page on loopback (0: any free port)
  std::optional<std::string> dashboard_flag;  // as typed: "auto" for a bare --dashboard
  double dashboard_linger = 0;
  std::string training_script;
  std::vector<std::string> training_script_args;

  // Paddle's launchers' own flags (plan/paddle_flags.h says what each does here).
  std::string log_level = "INFO";  // the launcher's console lines at this level and above
  bool log_overwrite = true;       // false: the logs of a run go on after an earlier run's
  bool sort_ip = false;            // nodes ranked by IP address alone
  int elastic_level = -1;          // -1, 0: a failure stops the job (3 s grace); >= 1: it restarts (30 s)
  bool enable_gpu_log = true;      // LOG_DIR/<job_id>.gpu.log from nvidia-smi every 5 s, on GPUs
  bool legacy = false;             // paddle.distributed.fleet.launch's worker contract, not launch's
  std::string legacy_reason;       // why legacy is on, for the launch log
  std::optional<std::string> with_gloo;            // PADDLE_WITH_GLOO for every process
  std::optional<std::string> auto_parallel_config;  // PADDLE_AUTO_PARALLEL_CONFIG, checked
  bool auto_cluster_config = false;                 // PADDLE_AUTO_CLUSTER
  std::optional<std::string> elastic_pre_hook;      // a shell command before each start of the processes
  // Variables given as well as their flag, which wins: "PADDLE_X=v is ignored: --x=w was given".
  std::vector<std::string> notices;
  std::vector<std::string> twins_read;  // "PADDLE_X=v as --x", for the launch log at DEBUG

  DispatchOptions dispatch;
  bool agent = false;  // --agent: one node of a dispatched job (dispatch/node_agent.h)
  // Every flag given outside the dispatch group, as ("--name", value) in the order given: what
  // a dispatched job passes on to each host's agent.
  std::vector<std::pair<std::string, std::string>> given_flags;
};

struct CommandLine {
  enum class Action { kRun, kHelp, kVersion };
  Action action = Action::kRun;
  LaunchOptions options;
  std::string text;  // the help or version text, for kHelp and kVersion
};

// Parses argv; everything from the training script on belongs to the script. A flag not given
// is read from its PADDLE_* twin in `env` (plan/paddle_flags.h). Throws common::UsageError naming
// the flag, or the variable, at fault.
CommandLine parse_command_line(int argc, const char* const argv[], const common::Environment& env = {});

// The options as sorted `name: value` pairs, for the "Configuration Arguments" block.
std::vector<std::pair<std::string, std::string>> describe_options(const LaunchOptions& options);

}  // namespace paddle::launcher
