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
#include "launcher/plan/environment.h"
#include "launcher/plan/launch_options.h"

namespace paddle::launcher {

struct DispatchPlan {
  std::vector<RemoteHost> hosts;  // node i is hosts[i]
  std::string job_id;
  std::string workspace;               // the same path on every host; relative: to the remote home
  std::optional<std::string> package;  // the local directory copied there, absolute
  std::vector<std::string> not_copied;  // workspace paths a copy neither sends nor deletes (logs, output)
  int master_port = 0;
  SshSettings ssh;
  // Where the launcher may be on a host, tried in order by the preflight: --remote_launcher as
  // given; without it, `paddle-launch` on the host's PATH and then the dispatcher's own absolute
  // path (a build tree or venv at the same place on every host, as DeepSpeed's runner assumes).
  std::vector<std::string> remote_launchers;
  nlohmann::json agent_env = nlohmann::json::object();
  std::string log_dir;         // here: the dispatcher's own files under LOG_DIR/dispatch
  std::string remote_log_dir;  // on each host, relative to the workspace unless absolute
  bool fetch_logs = false;
  std::vector<std::string> notes;  // said once in the dispatcher's log (conf.py keys with no use here)

  // The agent command of node `rank` for the remote shell, with the master at `master_ip`,
  // started as `launcher` (what the preflight found on that host).
  std::string agent_command(size_t rank, const std::string& master_ip, const std::string& launcher) const;
  // The preflight's remote command: finds the launcher among remote_launchers (printing
  // `launcher: PATH`), checks for rsync or the workspace, then prints the launcher's --version.
  // Exits 127 with one line naming every place tried when no launcher is there.
  std::string preflight_command() const;
  // A name for host i's files here: "host", or "host_port" when several share a host.
  std::string host_label(size_t i) const;

  // Filled by make_dispatch_plan: the agent flags every node gets, and per node its own.
  std::vector<std::string> agent_flags;
  std::vector<std::vector<std::string>> node_flags;
  std::vector<std::string> script_and_args;
};

// Throws common::UsageError naming the flag, file:line or variable at fault. `random_port`
// picks the master's port when nothing else names one; `own_path` is this launcher's absolute
// path (empty when unknown).
DispatchPlan make_dispatch_plan(const LaunchOptions& options, const EnvMap& env, int random_port,
                                const std::string& own_path = {});

// The path the preflight found on a host, from its output's `launcher: PATH` line; nullopt if none.
std::optional<std::string> launcher_found(const std::string& preflight_output);

}  // namespace paddle::launcher
