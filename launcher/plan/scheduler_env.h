#pragma once
// What a scheduler tells a launcher about the job's nodes through the environment, so that
// `srun --ntasks-per-node=1 paddle-launch ...`, `mpirun -npernode 1 paddle-launch ...` and the
// Kubernetes operators' pods need no --master/--nnodes/--rank. Detected, in this order:
//   Slurm          SLURM_JOB_NODELIST (bracket ranges parsed here, no scontrol), SLURM_NODEID,
//                  SLURM_NNODES; the master is the first listed node
//   Open MPI       OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE (one launcher per node); the master
//                  must be given, unless there is one node
//   PyTorchJob     MASTER_ADDR, MASTER_PORT, PET_NNODES, PET_NODE_RANK (Kubeflow v1), or
//                  PET_MASTER_ADDR, PET_MASTER_PORT for them (Trainer v2); PET_NPROC_PER_NODE
//                  is --nproc_per_node's default ("auto": one per GPU, else 1)
//   PaddleJob      PADDLE_TRAINER_ENDPOINTS, POD_IP, PADDLE_TRAINER_ID; the master is the first
//                  endpoint's node (Kubeflow's PaddleJob itself gives PADDLE_MASTER, PADDLE_NNODES
//                  and PADDLE_JOB_ID, which are --master's, --nnodes' and --job_id's twins)
//   Volcano        VC_TASK_INDEX (or VK_TASK_INDEX) and its svc plugin's host lists, VC_<TASK>_HOSTS
//                  or /etc/volcano/<task>.host: the tasks' hosts in task-name order; this node is
//                  its task's VC_TASK_INDEX (several tasks: the host named HOSTNAME); the master is
//                  the first host
// Explicit flags win over all of these; a flag that contradicts them is an error.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/plan/environment.h"

namespace paddle::launcher {

struct SchedulerView {
  std::string source;               // "Slurm (SLURM_JOB_NODELIST=...)", printed by the launcher
  std::vector<std::string> nodes;   // host names or addresses, in the scheduler's order; may be empty
  std::optional<int> nnodes;
  std::optional<int> node_rank;
  std::optional<std::string> master_host;  // a host name or address
  std::optional<int> master_port;
  // The scheduler gathers every node's launcher output into one stream (srun, mpirun), so the
  // console labels each line with its node and rank.
  bool shares_console = false;
  // Slurm's name for this node (SLURMD_NODENAME), where Slurm runs more than one node.
  std::optional<std::string> node_name;
  std::optional<int> nproc_per_node;  // PET_NPROC_PER_NODE, when a number
};

// Throws common::UsageError naming a malformed variable. `volcano_dir` holds Volcano's host files
// where its svc plugin injects no variables.
std::optional<SchedulerView> detect_scheduler(const EnvMap& env, const std::string& volcano_dir = "/etc/volcano");

// Where this node keeps its logs: LOG_DIR/NODE_NAME for a node of a multi-node Slurm job whose
// --log_dir was not given, since a job's nodes usually share the working directory and would
// overwrite each other's workerlog.0; else `log_dir` as it is.
std::string node_log_dir(const std::optional<SchedulerView>& scheduler, const std::string& log_dir, bool log_dir_given);

// "node[01-04,07],gpu5" -> node01 node02 node03 node04 node07 gpu5 (zero padding kept).
// Throws common::UsageError naming SLURM_JOB_NODELIST for a malformed list.
std::vector<std::string> expand_slurm_nodelist(std::string_view list);

}  // namespace paddle::launcher
