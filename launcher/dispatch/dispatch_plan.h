#pragma once
// DispatchPlan: what a job dispatched over SSH (dispatcher.h) does on which host, decided from
// the command line before anything runs, so that bad input stops it before any host is touched.
//
// Host i of the host list is node i. Each host runs the launcher itself as the node agent
// (node_agent.h), in the job's workspace:
//
//   cd WORKSPACE && exec REMOTE_LAUNCHER --agent --master=HOST0_IP:PORT --nnodes=N --rank=i
//        --job_id=JOB [--start_port=PADDLE_PORT] [--nproc_per_node=SLOTS] USER_FLAGS... SCRIPT ARGS...
//
// so collective and PS jobs, failures, restarts and the root-cause report are the multi-node
// launcher's own. What must not show on a command line (ps, /proc) goes to the agent as one JSON
// line on its stdin: `{"env": {"NAME": "VALUE", ...}}` (conf.py's LD_LIBRARY_PATH and NIC,
// --env, PADDLE_JOB_TOKEN).
//
// The workspace is ROOT_DIR/JOB with --job_dispatch_package (copied there), or the
// --job_workspace given. JOB is --job_id, else the package's (or workspace's) directory name, so
// that dispatching the same package again copies only what changed.

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "launcher/dispatch/remote_hosts.h"
#include "launcher/dispatch/ssh_command.h"
#include "launcher/environment.h"
#include "launcher/launch_options.h"

namespace paddle::launcher {

struct DispatchPlan {
  std::vector<RemoteHost> hosts;  // node i is hosts[i]
  std::string job_id;
  std::string workspace;               // the same path on every host; relative: to the remote home
  std::optional<std::string> package;  // the local directory copied there, absolute
  std::vector<std::string> not_copied;  // workspace paths a copy neither sends nor deletes (logs, output)
  int master_port = 0;
  SshSettings ssh;
  std::string remote_launcher;
  nlohmann::json agent_env = nlohmann::json::object();
  std::string log_dir;         // here: the dispatcher's own files under LOG_DIR/dispatch
  std::string remote_log_dir;  // on each host, relative to the workspace unless absolute
  bool fetch_logs = false;
  std::vector<std::string> notes;  // said once in the dispatcher's log (conf.py keys with no use here)

  // The agent command of node `rank` for the remote shell, with the master at `master_ip`.
  std::string agent_command(size_t rank, const std::string& master_ip) const;
  // A name for host i's files here: "host", or "host_port" when several share a host.
  std::string host_label(size_t i) const;

  // Filled by make_dispatch_plan: the agent flags every node gets, and per node its own.
  std::vector<std::string> agent_flags;
  std::vector<std::vector<std::string>> node_flags;
  std::vector<std::string> script_and_args;
};

// Throws common::UsageError naming the flag, file:line or variable at fault. `random_port`
// picks the master's port when nothing else names one.
DispatchPlan make_dispatch_plan(const LaunchOptions& options, const EnvMap& env, int random_port);

}  // namespace paddle::launcher
