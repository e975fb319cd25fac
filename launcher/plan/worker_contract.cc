#include "launcher/plan/worker_contract.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "common/error.h"
#include "common/parse.h"

namespace paddle::launcher {
namespace {

constexpr const char* kLongLists[] = {"TRAINER_IP_PORT_LIST", "PADDLE_TRAINER_ENDPOINTS"};  // process_context.py

const std::string* find(const EnvList& env, std::string_view name) {
  const auto it = std::ranges::find_if(env, [&](const auto& v) { return v.first == name; });
  return it == env.end() ? nullptr : &it->second;
}

size_t env_limit_length(const HostFacts& host) {
  const auto text = get_env(host.env, "PADDLE_ENV_LIMIT_LEN");
  if (!text || text->empty()) return kDefaultEnvLimitLength;
  return static_cast<size_t>(common::parse_int<common::UsageError>(*text, "PADDLE_ENV_LIMIT_LEN", 1, 1 << 30));
}

// The legacy launcher's device variables: FLAGS_selected_accelerators beside the device's own.
void add_legacy_contract(LaunchPlan& plan) {
  for (auto& p : plan.processes) {
    if (p.role != Role::kTrainer) continue;
    for (const char* selected : {"FLAGS_selected_gpus", "FLAGS_selected_xpus"})
      if (const std::string* ids = find(p.env, selected)) {
        p.env.emplace_back("FLAGS_selected_accelerators", *ids);
        break;
      }
  }
}

// A name that looks like it holds a secret: a token, a password, a key.
bool secret(std::string name) {
  std::ranges::transform(name, name.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (const char* word : {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE"})
    if (name.find(word) != std::string::npos) return true;
  return name.ends_with("_KEY");
}

}  // namespace

void add_worker_contract(LaunchPlan& plan, const LaunchOptions& o, const HostFacts& host) {
  for (auto& p : plan.processes) {
    if (p.role != Role::kTrainer) continue;
    if (o.with_gloo) p.env.emplace_back("PADDLE_WITH_GLOO", *o.with_gloo);
    if (o.auto_parallel_config) {
      p.env.emplace_back("PADDLE_AUTO_PARALLEL_CONFIG", *o.auto_parallel_config);
      p.env.emplace_back("PADDLE_AUTO_PARALLEL_STAGE", "run");
    }
  }
  if (o.legacy) return add_legacy_contract(plan);
  const std::string log_dir = std::filesystem::absolute(o.log_dir).lexically_normal().string();
  const size_t limit = env_limit_length(host);
  for (auto& p : plan.processes) {
    p.env.emplace_back("PADDLE_LOG_DIR", log_dir);
    if (!host.pod_name.empty()) p.env.emplace_back("POD_NAME", host.pod_name);
    if (p.role == Role::kTrainer) p.env.emplace_back("PADDLE_AUTO_CLUSTER", o.auto_cluster_config ? "1" : "0");
    const std::string* rank = find(p.env, "PADDLE_TRAINER_ID");
    if (rank == nullptr) continue;
    p.backup_env_file = fmt::format("{}/backup_env.{}.json", log_dir, *rank);
    p.env.emplace_back("PADDLE_BACKUP_ENV_PATH", p.backup_env_file);
    for (const char* name : kLongLists) {
      const auto it = std::ranges::find_if(p.env, [&](const auto& v) { return v.first == name; });
      if (it == p.env.end() || it->second.size() < limit) continue;
      p.env_backup_only.push_back(std::move(*it));
      p.env.erase(it);
    }
  }
}

std::string backup_env_json(const ProcessSpec& spec, const EnvMap& child_env) {
  nlohmann::json backup = nlohmann::json::object();
  const auto keep = [&backup](const std::string& name, const std::string& value) {
    if (name != "PADDLE_BACKUP_ENV_PATH" && !secret(name)) backup[name] = value;
  };
  for (const auto& [name, value] : spec.env)
    if (const auto it = child_env.find(name); it != child_env.end()) keep(name, it->second);
  for (const auto& [name, value] : spec.env_backup_only) keep(name, value);
  for (const char* name : {"PADDLE_RESTART_COUNT", "PADDLE_ERROR_FILE", "PADDLE_METRICS_FILE"})
    if (const auto it = child_env.find(name); it != child_env.end()) keep(name, it->second);
  return backup.dump(4) + "\n";  // nlohmann's objects are sorted by name, as Paddle's sort_keys
}

}  // namespace paddle::launcher
