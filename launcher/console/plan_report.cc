#include "launcher/console/plan_report.h"
#include "launcher/plan/worker_contract.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

#include "common/error.h"

namespace paddle::launcher {
namespace {

constexpr size_t kMinNameWidth = 40;
constexpr size_t kValueWidth = 45;
constexpr size_t kSpacing = 2;

std::string centered(const std::string& text, size_t width) {
  if (text.size() >= width) return text;
  // Python's str.format '^' puts the extra space on the right.
  size_t left = (width - text.size()) / 2;
  return std::string(left, ' ') + text + std::string(width - text.size() - left, ' ');
}

std::string right_aligned(const std::string& text, size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

std::string quote_if_needed(const std::string& arg) {
  if (!arg.empty() && arg.find_first_of(" \t\n'\"\\$`*?[]{}()<>|&;#~!") == std::string::npos) return arg;
  std::string quoted = "'";
  for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

std::string configuration_block(const LaunchOptions& options) {
  std::string text = "-----------  Configuration Arguments -----------\n";
  for (const auto& [name, value] : describe_options(options)) text += fmt::format("{}: {}\n", name, value);
  text += "------------------------------------------------\n";
  return text;
}

std::string distributed_envs_table(const EnvList& env) {
  size_t name_width = kMinNameWidth;
  for (const auto& [k, v] : env) name_width = std::max(name_width, k.size());
  const size_t length = name_width + kValueWidth + kSpacing;
  const std::string border = "    +" + std::string(length, '=') + "+";
  const std::string line = "    +" + std::string(length, '-') + "+";
  auto row = [&](const std::string& k, const std::string& v) {
    return "    |" + right_aligned(k, name_width) + std::string(kSpacing, ' ') + centered(v, kValueWidth) + "|\n";
  };
  std::string text = "\n" + border + "\n" + row("Distributed Envs", "Value") + line + "\n";
  for (const auto& [k, v] : env) {
    std::string shown = v.size() >= kValueWidth ? "... " + v.substr(v.size() - 41) : v;
    text += row(k, shown);
  }
  text += border + "\n";
  return text;
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string text;
  for (const auto& arg : argv) {
    if (!text.empty()) text += ' ';
    text += quote_if_needed(arg);
  }
  return text;
}

std::string dry_run_table(const LaunchPlan& plan) {
  std::string text = fmt::format("paddle-launch plan: {} mode, node {} ({} of {}), {} local process(es), world size {}\n",
                                 mode_name(plan.mode), plan.node_ip, plan.node_rank, plan.node_count,
                                 plan.processes.size(), plan.world_size());
  text += fmt::format("command: {}\n", shell_join(plan.command));
  if (!plan.server_endpoints.empty())
    text += fmt::format("servers: {}\n", fmt::join(plan.server_endpoints, ","));
  text += fmt::format("trainers: {}\n", fmt::join(plan.trainer_endpoints, ","));
  if (!plan.heter_endpoints.empty())
    text += fmt::format("heter workers: {}\n", fmt::join(plan.heter_endpoints, ","));
  const size_t role_width = plan.heter_endpoints.empty() ? 8 : 12;  // "heter_worker"
  text += fmt::format("\n{:<{}} {:>5} {:>5}  {:<22} {}\n", "ROLE", role_width, "RANK", "LOCAL", "ENDPOINT", "LOG");
  for (const auto& p : plan.processes)
    text += fmt::format("{:<{}} {:>5} {:>5}  {:<22} {}\n", role_name(p.role), role_width, p.rank, p.local_index,
                        p.endpoint, p.log_file);
  for (const auto& p : plan.processes) {
    text += fmt::format("\n{} {} environment (besides the launcher's, without {}):\n", role_name(p.role), p.rank,
                        fmt::join(kUnsetInChildren, ", "));
    for (const auto& [k, v] : p.env) text += fmt::format("  {}={}\n", k, v);
    text += "  PADDLE_RESTART_COUNT=0\n";
  }
  return text;
}

std::string dry_run_json(const LaunchPlan& plan) {
  nlohmann::ordered_json doc;
  doc["mode"] = mode_name(plan.mode);
  doc["node_ip"] = plan.node_ip;
  doc["node_rank"] = plan.node_rank;
  doc["node_count"] = plan.node_count;
  doc["world_size"] = plan.world_size();
  doc["log_dir"] = plan.log_dir;
  doc["command"] = plan.command;
  doc["server_endpoints"] = plan.server_endpoints;
  doc["trainer_endpoints"] = plan.trainer_endpoints;
  if (!plan.heter_endpoints.empty()) doc["heter_endpoints"] = plan.heter_endpoints;
  doc["unset_env"] = kUnsetInChildren;
  doc["processes"] = nlohmann::ordered_json::array();
  for (const auto& p : plan.processes) {
    nlohmann::ordered_json proc;
    proc["role"] = role_name(p.role);
    proc["rank"] = p.rank;
    proc["local_index"] = p.local_index;
    proc["endpoint"] = p.endpoint;
    proc["log_file"] = p.log_file;
    proc["command"] = plan.command;
    nlohmann::ordered_json env = nlohmann::ordered_json::object();
    for (const auto& [k, v] : p.env) env[k] = v;
    env["PADDLE_RESTART_COUNT"] = "0";
    proc["env"] = env;
    if (!p.backup_env_file.empty()) {
      EnvMap at_start;
      for (const auto& [name, value] : env.items()) at_start[name] = value.get<std::string>();
      proc["backup_env_file"] = p.backup_env_file;
      proc["backup_env"] = nlohmann::ordered_json::parse(backup_env_json(p, at_start));
    }
    doc["processes"].push_back(proc);
  }
  return doc.dump(2) + "\n";
}

void write_endpoints_log(const LaunchPlan& plan, const std::string& rank_map) {
  const std::string path = plan.log_dir + "/endpoints.log";
  std::ofstream out(path, std::ios::trunc);
  out << "PADDLE_TRAINER_ENDPOINTS: \n";
  for (const auto& e : plan.trainer_endpoints) out << e << "\n";
  if (!rank_map.empty()) out << "RANK MAP: \n" << rank_map;
  if (!out) throw common::UsageError(fmt::format("--log_dir: cannot write {}", path));
}

void announce_plan(const LaunchPlan& plan, LaunchLog& log) {
  for (const auto& note : plan.notes) log.info(note);
  if (plan.mode == LaunchPlan::Mode::kCollective) {
    log.info(fmt::format("Local start {} processes. First process distributed environment info (Only For Debug): {}",
                         plan.processes.size(), distributed_envs_table(plan.processes.front().env)));
    log.info(fmt::format("details about PADDLE_TRAINER_ENDPOINTS can be found in {0}/endpoints.log, and detail "
                         "running logs maybe found in {0}/workerlog.0",
                         plan.log_dir));
    return;
  }
  for (Role role : {Role::kServer, Role::kWorker, Role::kHeterWorker}) {
    int count = 0;
    const ProcessSpec* first = nullptr;
    for (const auto& p : plan.processes)
      if (p.role == role && count++ == 0) first = &p;
    if (first != nullptr)
      log.info(fmt::format("Local {} start {} processes. First process distributed environment info (Only For Debug): {}",
                           role_name(role), count, distributed_envs_table(first->env)));
  }
  if (plan.heter_endpoints.empty())
    log.info(fmt::format("Please check servers and workers logs in {0}/workerlog.* and {0}/serverlog.*", plan.log_dir));
  else  // Paddle 2.6's line, which names its coordinators' logs too
    log.info(fmt::format("Please check servers, workers, coordinator and heter_worker logs in {0}/workerlog.*, "
                         "{0}/serverlog.* , {0}/coordinatorlog.*, and {0}/heterlog.*",
                         plan.log_dir));
}

}  // namespace paddle::launcher
