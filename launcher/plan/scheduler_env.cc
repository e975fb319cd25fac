#include "launcher/plan/scheduler_env.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "common/error.h"
#include "common/parse.h"
#include "launcher/plan/address.h"

namespace paddle::launcher {
namespace {

using common::UsageError;

constexpr int64_t kMaxNodes = 100000;  // what one node list may expand to

std::optional<std::string> present(const EnvMap& env, const char* name) {
  auto v = get_env(env, name);
  if (!v || v->empty()) return std::nullopt;
  return v;
}

int count(const EnvMap& env, const char* name, int min) {
  return static_cast<int>(common::parse_int<UsageError>(*present(env, name), name, min, 1000000));
}

// Splits at commas outside brackets: "a[1-2],b" -> "a[1-2]", "b".
std::vector<std::string> top_level_items(std::string_view list) {
  std::vector<std::string> items;
  int depth = 0;
  std::string item;
  for (char c : list) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth < 0) throw UsageError(fmt::format("SLURM_JOB_NODELIST: unbalanced ']' in '{}'", list));
    if (c == ',' && depth == 0) {
      items.push_back(item);
      item.clear();
    } else {
      item += c;
    }
  }
  if (depth != 0) throw UsageError(fmt::format("SLURM_JOB_NODELIST: unbalanced '[' in '{}'", list));
  items.push_back(item);
  return items;
}

// "01-04" or "7" -> the numbers as text, keeping the first bound's zero padding.
void expand_range(const std::string& prefix, const std::string& range, const std::string& suffix, std::string_view list,
                  std::vector<std::string>& out) {
  const auto dash = range.find('-');
  const std::string first = range.substr(0, dash);
  const std::string last = dash == std::string::npos ? first : range.substr(dash + 1);
  const auto number = [](const std::string& s) -> std::optional<int64_t> {
    if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
    return common::to_int(s);  // nothing when it overflows
  };
  const auto lo = number(first), hi = number(last);
  if (!lo || !hi)
    throw UsageError(fmt::format("SLURM_JOB_NODELIST: '{}' in '{}' is not a number or a range", range, list));
  if (*hi < *lo || *hi - *lo >= kMaxNodes || out.size() + static_cast<size_t>(*hi - *lo) >= kMaxNodes)
    throw UsageError(fmt::format("SLURM_JOB_NODELIST: range '{}' in '{}' runs backwards or makes more than {} nodes",
                                 range, list, kMaxNodes));
  for (int64_t n = *lo; n <= *hi; ++n) {
    std::string digits = std::to_string(n);
    if (digits.size() < first.size()) digits.insert(0, first.size() - digits.size(), '0');
    out.push_back(prefix + digits + suffix);
  }
}

// Volcano's svc plugin: each task's hosts, "<job>-<task>-<i>.<job>", from VC_<TASK>_HOSTS or,
// where it injects no variables, /etc/volcano/<task>.host (one per line); tasks in name order.
std::optional<SchedulerView> volcano(const EnvMap& env, const std::string& volcano_dir) {
  const char* index_name = present(env, "VC_TASK_INDEX") ? "VC_TASK_INDEX" : "VK_TASK_INDEX";
  if (!present(env, index_name)) return std::nullopt;
  std::map<std::string, std::vector<std::string>> tasks;  // sorted by task name
  std::string from;
  for (const auto& [name, value] : env)
    if (name.starts_with("VC_") && name.ends_with("_HOSTS") && name.size() > 9 && !value.empty()) {
      tasks[name.substr(3, name.size() - 9)] = common::split_list<UsageError>(value, name);
      from += (from.empty() ? "" : ", ") + name;
    }
  if (tasks.empty()) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(volcano_dir, ec)) {
      if (entry.path().extension() != ".host") continue;
      std::ifstream in(entry.path());
      std::vector<std::string> hosts;
      for (std::string line; std::getline(in, line);)
        if (!common::trim(line).empty()) hosts.emplace_back(common::trim(line));
      if (!hosts.empty()) tasks[entry.path().stem().string()] = hosts;
    }
    from = volcano_dir + "/*.host";
  }
  if (tasks.empty()) return std::nullopt;
  SchedulerView v;
  v.source = fmt::format("Volcano ({}, {})", from, index_name);
  for (const auto& [task, hosts] : tasks) v.nodes.insert(v.nodes.end(), hosts.begin(), hosts.end());
  v.nnodes = static_cast<int>(v.nodes.size());
  const int index = count(env, index_name, 0);
  if (tasks.size() == 1) {
    v.node_rank = index;
  } else if (auto me = present(env, "HOSTNAME")) {
    for (size_t i = 0; i < v.nodes.size(); ++i)
      if (v.nodes[i] == *me || v.nodes[i].starts_with(*me + ".")) v.node_rank = static_cast<int>(i);
  }
  if (v.node_rank && *v.node_rank >= *v.nnodes)
    throw UsageError(fmt::format("{}={} is past the {} host(s) of {}", index_name, index, *v.nnodes, from));
  v.master_host = v.nodes.front();
  return v;
}

}  // namespace

std::vector<std::string> expand_slurm_nodelist(std::string_view list) {
  std::vector<std::string> nodes;
  for (const std::string& item : top_level_items(list)) {
    if (item.empty()) throw UsageError(fmt::format("SLURM_JOB_NODELIST: empty entry in '{}'", list));
    const auto open = item.find('[');
    if (open == std::string::npos) {
      nodes.push_back(item);
      continue;
    }
    const auto close = item.find(']', open);
    const std::string prefix = item.substr(0, open), suffix = item.substr(close + 1);
    if (suffix.find('[') != std::string::npos)
      throw UsageError(fmt::format("SLURM_JOB_NODELIST: '{}' has more than one bracket range", item));
    for (const std::string& range : common::split_list<UsageError>(item.substr(open + 1, close - open - 1), "SLURM_JOB_NODELIST"))
      expand_range(prefix, range, suffix, list, nodes);
  }
  return nodes;
}

std::optional<SchedulerView> detect_scheduler(const EnvMap& env, const std::string& volcano_dir) {
  SchedulerView v;
  if (auto nodelist = present(env, "SLURM_JOB_NODELIST")) {
    v.source = fmt::format("Slurm (SLURM_JOB_NODELIST={})", *nodelist);
    v.nodes = expand_slurm_nodelist(*nodelist);
    v.nnodes = present(env, "SLURM_NNODES") ? count(env, "SLURM_NNODES", 1) : static_cast<int>(v.nodes.size());
    if (*v.nnodes != static_cast<int>(v.nodes.size()))
      throw UsageError(fmt::format("SLURM_NNODES={} disagrees with SLURM_JOB_NODELIST={}, which lists {} node(s)", *v.nnodes,
                                   *nodelist, v.nodes.size()));
    if (present(env, "SLURM_NODEID")) v.node_rank = count(env, "SLURM_NODEID", 0);
    v.master_host = v.nodes.front();
    v.shares_console = *v.nnodes > 1;
    if (auto name = present(env, "SLURMD_NODENAME"); name && *v.nnodes > 1) {
      if (!common::is_plain_name(*name) || *name == "." || *name == "..")
        throw UsageError(fmt::format("SLURMD_NODENAME: '{}' is not a host name", *name));
      v.node_name = *name;
    }
    return v;
  }
  if (present(env, "OMPI_COMM_WORLD_SIZE")) {
    v.source = "Open MPI (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE)";
    v.nnodes = count(env, "OMPI_COMM_WORLD_SIZE", 1);
    if (present(env, "OMPI_COMM_WORLD_RANK")) v.node_rank = count(env, "OMPI_COMM_WORLD_RANK", 0);
    v.shares_console = *v.nnodes > 1;
    return v;
  }
  const bool v1 = present(env, "MASTER_ADDR").has_value();
  if (present(env, "PET_NNODES") && (v1 || present(env, "PET_MASTER_ADDR"))) {
    const char* addr = v1 ? "MASTER_ADDR" : "PET_MASTER_ADDR";
    const char* port = v1 ? "MASTER_PORT" : "PET_MASTER_PORT";
    v.source = fmt::format("Kubernetes PyTorchJob ({}, {}, PET_NNODES, PET_NODE_RANK)", addr, port);
    if (present(env, "PET_NNODES")->find(':') != std::string::npos)
      throw UsageError(fmt::format("PET_NNODES={}: an elastic PyTorchJob's c10d rendezvous is torchrun's; give "
                                   "--master=etcd://HOST:PORT --nnodes=MIN:MAX for an elastic job",
                                   *present(env, "PET_NNODES")));
    v.nnodes = count(env, "PET_NNODES", 1);
    if (present(env, "PET_NODE_RANK")) v.node_rank = count(env, "PET_NODE_RANK", 0);
    v.master_host = *present(env, addr);
    if (auto text = present(env, port)) v.master_port = common::parse_port<UsageError>(*text, port);
    if (auto n = present(env, "PET_NPROC_PER_NODE"); n && *n != "auto")
      v.nproc_per_node = static_cast<int>(common::parse_int<UsageError>(*n, "PET_NPROC_PER_NODE", 1, 4096));
    return v;
  }
  if (present(env, "PADDLE_TRAINER_ENDPOINTS") && present(env, "POD_IP") && present(env, "PADDLE_TRAINER_ID")) {
    v.source = "Kubernetes PaddleJob (PADDLE_TRAINER_ENDPOINTS, POD_IP, PADDLE_TRAINER_ID)";
    for (const auto& e : common::split_list<UsageError>(*present(env, "PADDLE_TRAINER_ENDPOINTS"), "PADDLE_TRAINER_ENDPOINTS")) {
      const std::string ip = common::parse_endpoint<UsageError>(e, "PADDLE_TRAINER_ENDPOINTS").host;
      if (std::find(v.nodes.begin(), v.nodes.end(), ip) == v.nodes.end()) v.nodes.push_back(ip);
    }
    v.nnodes = static_cast<int>(v.nodes.size());
    v.node_rank = count(env, "PADDLE_TRAINER_ID", 0);
    v.master_host = v.nodes.front();
    return v;
  }
  return volcano(env, volcano_dir);
}

std::string node_log_dir(const std::optional<SchedulerView>& scheduler, const std::string& log_dir, bool log_dir_given) {
  if (log_dir_given || !scheduler || !scheduler->node_name) return log_dir;
  return log_dir + "/" + *scheduler->node_name;
}

}  // namespace paddle::launcher
