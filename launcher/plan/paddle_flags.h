#pragma once
// Paddle's launchers' flags beside ours, so that a job script written for either Paddle launcher
// runs unchanged: `python -m paddle.distributed.launch`'s table (launch/context/args_envs.py,
// 2.6.2 and 3.3.1) and what `python -m paddle.distributed.fleet.launch` has beyond ours. What each
// does here, read from Paddle's source:
//   --log_level LEVEL            the launcher's console lines at LEVEL and above; launch.log keeps all
//   --log_overwrite BOOL         false: each log goes on after an earlier run's, as Paddle's default
//                                does; true (our default): each run starts its logs afresh
//   --sort_ip BOOL               nodes ranked by IP address alone (every node must say the same)
//   --max_restart N              --max_restarts under Paddle's name
//   --elastic_level L            -1 or 0: a failure stops the job, with 3 s of grace; >= 1: the job
//                                restarts (--max_restart times, 3 unless given), with 30 s of grace
//   --enable_gpu_log BOOL        LOG_DIR/<job_id>.gpu.log: nvidia-smi's figures every 5 s (GPUs only)
//   --legacy BOOL                the legacy launcher's worker contract (fleet.launch's variables, no
//                                Paddle 3 additions); on by Paddle's own rule too: a flag only
//                                fleet.launch knows, given without a master
//   --xpus IDS, --npus IDS       the device ids are Kunlun XPUs (FLAGS_selected_xpus, BKCL) or
//                                Ascend NPUs (FLAGS_selected_npus, PADDLE_XCCL_BACKEND=npu)
//   --with_gloo 0|1|2            PADDLE_WITH_GLOO for every process
//   --gloo_port, --trainers, --trainer_num, --selected_gpus, --selected_xpus
//                                --http_port, --workers, --worker_num, --gpus, --xpus by Paddle's names
//   --auto_parallel_config FILE  PADDLE_AUTO_PARALLEL_CONFIG and PADDLE_AUTO_PARALLEL_STAGE=run for the
//                                trainers; its tuner's pre-run (tuner_run_mode tuner_*) is refused
//   --auto_cluster_config BOOL   PADDLE_AUTO_CLUSTER=1 or 0 for the trainers
//   --elastic_server HOST:PORT, --np N[:M]   --master=etcd://HOST:PORT, --nnodes
//   --elastic_pre_hook CMD       a shell command run before each start of this node's processes
//   --scale, --force             accepted with a warning: Paddle reads them and uses neither
// Refused in one line naming the feature: --auto_tuner_json (the auto-tuner's trial runs), PS
// coordinators (--coordinator_num, --coordinators), auto-parallel rank mapping
// (--enable_auto_mapping, --rank_mapping_path, --cluster_topo_path), --run_mode=rpc.
//
// Every flag of Paddle's table is also read from its PADDLE_* twin (env_args_mapping) when the
// flag is not given. A flag on the command line wins, and the twin it overrides is named in a
// notice: Paddle's launcher lets the variable win, with a warning, which surprises users.

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "launcher/plan/environment.h"

namespace CLI {
class App;
}

namespace paddle::launcher {

struct LaunchOptions;

// The flags that are another flag under another name, or that are checked before they land in
// LaunchOptions, as typed.
struct PaddleFlagValues {
  std::optional<std::string> log_overwrite, sort_ip, enable_gpu_log, legacy, auto_cluster_config;  // Paddle's bools
  std::optional<int> max_restart;
  std::optional<std::string> xpus, npus, selected_gpus, selected_xpus;
  std::optional<int> gloo_port;
  std::optional<std::string> trainers;
  std::optional<int> trainer_num;
  std::optional<std::string> auto_tuner_json;
  std::optional<std::string> elastic_server, np, scale, force;
  std::optional<std::string> coordinator_num, coordinators, enable_auto_mapping, rank_mapping_path, cluster_topo_path;
};

// Adds the flags above to `app`, writing into `options` and `values`.
void add_paddle_flags(CLI::App& app, LaunchOptions& options, PaddleFlagValues& values);

// A flag's PADDLE_* twin. `read_where_used` twins are read by the code that uses the setting,
// which names the variable in its errors (PADDLE_MASTER, PADDLE_NNODES, ...); the others are
// given to the parser as their flag.
struct FlagTwin {
  std::string_view variable;
  std::string_view flag;
  bool read_where_used = false;
};
std::span<const FlagTwin> flag_twins();

// The flags that name the same setting as `flag` (itself included): a twin is read only when
// none of them was given.
std::vector<std::string_view> same_setting(std::string_view flag);

// After parsing: aliases merged into their setting (two names given different values is an
// error), Paddle's bools read, refusals, the restart policy of --elastic_level and the legacy
// rule. `given(flag)` says whether the flag came from the command line or a twin.
// Throws common::UsageError naming the flag.
void finish_paddle_flags(LaunchOptions& options, const PaddleFlagValues& values,
                         const std::function<bool(std::string_view flag)>& given, const EnvMap& env);

// Paddle's strtobool: y, yes, t, true, on, 1 and n, no, f, false, off, 0, in any case.
std::optional<bool> paddle_bool(std::string_view text);

}  // namespace paddle::launcher
