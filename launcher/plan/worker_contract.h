#pragma once
// What python -m paddle.distributed.launch adds to its processes' environment beyond what the
// plan's roles set (read from Paddle 3.3.1's launch/controllers/collective.py, controller.py and
// utils/process_context.py; the backup and its length rule are 2.6.2's too):
//   every process          PADDLE_LOG_DIR (absolute), POD_NAME (six letters, one per node)
//   collective trainers    PADDLE_AUTO_CLUSTER (1 with --auto_cluster_config, else 0; Paddle writes
//                          True/False, which its own engine's int() cannot read);
//                          with --auto_parallel_config: PADDLE_AUTO_PARALLEL_CONFIG and
//                          PADDLE_AUTO_PARALLEL_STAGE=run; with --with_gloo: PADDLE_WITH_GLOO
//   a process with a PADDLE_TRAINER_ID
//                          PADDLE_BACKUP_ENV_PATH=LOG_DIR/backup_env.<PADDLE_TRAINER_ID>.json, which
//                          the supervisor writes at each start (supervise/backup_env_file.h); and
//                          PADDLE_TRAINER_ENDPOINTS (TRAINER_IP_PORT_LIST) left out of the
//                          environment, kept in the backup alone, once it is PADDLE_ENV_LIMIT_LEN
//                          (48,000) characters or more: paddle.distributed.backup_env's
//                          getenv_or_backup reads it back, so a job of 10,000 ranks starts.
// Under --legacy (fleet.launch's contract) none of these, but FLAGS_selected_accelerators beside
// FLAGS_selected_gpus/xpus, as the legacy launcher sets.

#include "launcher/plan/launch_plan.h"

namespace paddle::launcher {

inline constexpr size_t kDefaultEnvLimitLength = 48000;  // PADDLE_ENV_LIMIT_LEN

// Adds the above to every process of `plan` (after its roles' variables). Throws
// common::UsageError for a malformed PADDLE_ENV_LIMIT_LEN.
void add_worker_contract(LaunchPlan& plan, const LaunchOptions& options, const HostFacts& host);

// LOG_DIR/backup_env.<rank>.json's contents for `spec`, whose environment at a start is
// `child_env`: one flat JSON object of names and values, sorted. Paddle's holds the whole
// environment, secrets and all; ours holds what the launcher set for the process (the plan's
// variables, those too long for the environment, PADDLE_RESTART_COUNT and the files' paths) and
// never a name that looks like a secret (TOKEN, SECRET, PASSWORD, ..._KEY).
std::string backup_env_json(const ProcessSpec& spec, const EnvMap& child_env);

}  // namespace paddle::launcher
