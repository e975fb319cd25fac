#pragma once
// LOG_DIR/backup_env.<rank>.json, Paddle's backup of a process's environment
// (launch/utils/process_context.py; read back by paddle.distributed.backup_env.getenv_or_backup):
// backup_env_json's object (plan/worker_contract.h), rewritten at each start of the process, which
// only its owner may read (0600).

#include "launcher/plan/launch_plan.h"

namespace paddle::launcher {

// Writes spec.backup_env_file (nothing when it is empty). Throws common::DataError naming the file.
void write_backup_env(const ProcessSpec& spec, const EnvMap& child_env);

}  // namespace paddle::launcher
