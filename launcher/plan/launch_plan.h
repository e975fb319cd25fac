#pragma once
// LaunchPlan: every process this node starts, with its role, rank, endpoint, log file and
// environment, worked out from the options and the facts of this host before anything starts.
// make_launch_plan() is pure apart from the PortSource, so every mode can be unit-tested.

#include <string>
#include <string_view>
#include <vector>

#include "launcher/plan/address.h"
#include "launcher/plan/environment.h"
#include "launcher/plan/launch_options.h"
#include "launcher/plan/port_reservation.h"
#include "launcher/plan/rank_map.h"

namespace paddle::launcher {

// What planning needs to know about this machine.
struct HostFacts {
  EnvMap env;                                // the launcher's own environment
  std::vector<std::string> local_addresses;  // IPv4 addresses of the interfaces
  std::vector<LocalInterface> interfaces;    // the interfaces holding them
  int gpu_count = 0;                         // visible GPUs
  unsigned cpu_cores = 1;
  std::string pod_name;                      // POD_NAME: six random letters, one per launcher
};

// Collective trainer; PS server; PS worker; PS heter worker (TRAINING_ROLE=HETER_TRAINER, a stage
// of a ps-heter job after the workers', plan/heter_stages.h).
enum class Role { kTrainer, kServer, kWorker, kHeterWorker };
std::string_view role_name(Role role);

struct ProcessSpec {
  Role role = Role::kTrainer;
  int rank = 0;         // global rank among the processes of its role
  int local_index = 0;  // N of workerlog.N / serverlog.N / heterlog.N
  std::string endpoint;
  std::string log_file;
  // LOG_DIR/error.<role>.<rank>.json: where the process leaves its ErrorRecord when it fails
  // (PADDLE_ERROR_FILE and TORCHELASTIC_ERROR_FILE; common/error_record.h).
  std::string error_file;
  // LOG_DIR/metrics.<role>.<rank>.jsonl: its progress, a line per logged step
  // (PADDLE_METRICS_FILE; runtime/train/run/metrics_log.h).
  std::string metrics_file;
  // LOG_DIR/progress.<role>.<rank>: where our runtime says what it does now, for hang and
  // straggler detection (PADDLE_PROGRESS_FILE; common/progress_page.h).
  std::string progress_page;
  EnvList env;  // set on top of the launcher's environment
  // Paddle's backup of the environment (plan/worker_contract.h): the file written at each start,
  // and the variables too long for the environment, which the file alone holds.
  std::string backup_env_file;
  EnvList env_backup_only;
};

struct LaunchPlan {
  enum class Mode { kCollective, kPs };
  Mode mode = Mode::kCollective;
  std::string node_ip;
  // The nodes --ips or --servers/--workers name, in their order (node_rank indexes it); empty
  // where a rendezvous ranks the nodes instead.
  std::vector<std::string> node_ips;
  int node_rank = 0;
  int node_count = 1;
  std::vector<std::string> command;  // argv of every process
  std::string log_dir;
  std::vector<std::string> trainer_endpoints;  // written to endpoints.log
  std::vector<std::string> server_endpoints;
  std::vector<std::string> heter_endpoints;  // PS heter: every heter worker, stage by stage
  std::string ps_store_endpoint;  // PS: the workers' Gloo store (PADDLE_GLOO_HTTP_ENDPOINT)
  std::vector<ProcessSpec> processes;  // local processes: servers, workers, then heter workers
  std::vector<int> fixed_local_ports;  // ports this node was told to use (checked before start)
  std::vector<std::string> notes;      // informational lines for the log
  int generation = 0;     // of the job: 0, then one more per restart (PADDLE_RESTART_COUNT)
  int restarts_used = 0;  // of --max_restarts, job-wide, before this generation

  // The process whose log is echoed to the console: the first local trainer/worker, else the
  // first local server.
  const ProcessSpec& echoed_process() const;
  int world_size() const;  // trainers (collective) or workers (PS)
};

std::string_view mode_name(LaunchPlan::Mode mode);

// Variables removed from every child's environment.
inline constexpr const char* kUnsetInChildren[] = {"http_proxy", "https_proxy"};

// Whether the options ask for a parameter-server job (--run_mode=ps or ps-heter, or any PS flag).
bool is_ps_job(const LaunchOptions& options);

// Throws common::UsageError naming the flag or variable at fault.
LaunchPlan make_launch_plan(const LaunchOptions& options, std::vector<std::string> command,
                            const HostFacts& host, PortSource& ports);

// This node's trainers' endpoints in a --master job: ports from --start_port, else free ones.
std::vector<std::string> cluster_endpoints(const LaunchOptions& options, const HostFacts& host,
                                           const std::string& node_ip, PortSource& ports);

// A node of a multi-node job as it registers with the master: its address, its trainers'
// endpoints and devices, its --rank.
NodeRegistration register_node(const LaunchOptions& options, const HostFacts& host, const std::string& node_ip,
                               const std::string& hostname, std::optional<int> rank, std::vector<std::string> endpoints);

// This node's collective plan in a multi-node job whose rank map is `nodes`; `job_env` (the
// master, the node count) goes to every process.
LaunchPlan make_cluster_plan(const LaunchOptions& options, std::vector<std::string> command, const HostFacts& host,
                             const std::vector<RankedNode>& nodes, int node_rank, const EnvList& job_env);

// The full environment of one process: the launcher's, less kUnsetInChildren and the spec's
// backup-only variables, plus the spec's variables and PADDLE_RESTART_COUNT.
EnvMap child_environment(const EnvMap& launcher_env, const ProcessSpec& spec, int restart_count);

}  // namespace paddle::launcher
