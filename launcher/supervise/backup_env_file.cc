#include "launcher/supervise/backup_env_file.h"

#include "common/file.h"
#include "launcher/plan/worker_contract.h"

namespace paddle::launcher {
void write_backup_env(const ProcessSpec& spec, const EnvMap& child_env) {
  if (spec.backup_env_file.empty()) return;
  common::write_file_atomically(spec.backup_env_file, backup_env_json(spec, child_env), common::Durability::kReadersOnly,
                                common::Readers::kOwnerOnly);
}

}  // namespace paddle::launcher
