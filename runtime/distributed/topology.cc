#include "runtime/distributed/topology.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <functional>
#include <optional>

#include "common/parse.h"

namespace paddle::runtime {
namespace {

std::optional<std::string> get(const Environment& env, const std::string& name) {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

std::string require(const Environment& env, const std::string& name, const std::string& style) {
  auto v = get(env, name);
  if (!v) throw TopologyError(fmt::format("{} environment: {} is not set", style, name));
  return *v;
}

int to_int(const std::string& text, const std::string& name, int min_value) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min_value)
    throw TopologyError(fmt::format("{}='{}' is not an integer >= {}", name, text, min_value));
  return value;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) items.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

ProcessRole parse_role(const std::string& value, const std::string& name) {
  if (value == "PSERVER") return ProcessRole::kServer;
  if (value == "TRAINER") return ProcessRole::kTrainer;
  if (value == "HETER_TRAINER")
    throw TopologyError(fmt::format("{}=HETER_TRAINER: train does not run the heter stages of a ps-heter job; start "
                                    "a Paddle program as the heter workers, or launch train without "
                                    "--heter_worker_num/--heter_workers",
                                    name));
  throw TopologyError(fmt::format("{}='{}' must be PSERVER or TRAINER", name, value));
}

void check_trainer_id(const Topology& t, const std::string& id_name, const std::string& num_name) {
  if (t.trainer_id >= t.trainer_num)
    throw TopologyError(fmt::format("{}={} is out of range for {}={}", id_name, t.trainer_id, num_name, t.trainer_num));
}

void find_server(Topology& t, const std::string& endpoint, const std::string& names, const std::string& list_name) {
  auto it = std::find(t.server_endpoints.begin(), t.server_endpoints.end(), endpoint);
  if (it == t.server_endpoints.end())
    throw TopologyError(fmt::format("{} gives {}, which is not in {}={}", names, endpoint, list_name,
                                    fmt::join(t.server_endpoints, ",")));
  t.server_index = static_cast<int>(it - t.server_endpoints.begin());
  t.current_endpoint = endpoint;
}

// The variables a PS style reads the role, the trainer count and a trainer's id from, and the
// names its errors give the server list and this server's endpoint.
struct PsVariables {
  std::string style;
  std::string role;
  std::string trainer_num;
  std::string trainer_id;
  std::string server_list;
  std::string this_endpoint;
};

// The topology every PS style shares: the role, the servers (as `list_servers` reads them), the
// trainer count, then this server's index in the list (its endpoint as `read_this_endpoint` reads
// it) or this trainer's id.
Topology ps_topology(const Environment& env, const PsVariables& names,
                     const std::function<std::vector<std::string>()>& list_servers,
                     const std::function<std::string()>& read_this_endpoint) {
  Topology t;
  t.kind = JobKind::kParameterServer;
  t.style = names.style;
  t.role = parse_role(require(env, names.role, names.style), names.role);
  t.server_endpoints = list_servers();
  if (t.server_endpoints.empty()) throw TopologyError(fmt::format("{} lists no parameter server", names.server_list));
  for (const auto& endpoint : t.server_endpoints)
    common::parse_endpoint<TopologyError>(endpoint, names.server_list);
  t.trainer_num = to_int(require(env, names.trainer_num, names.style), names.trainer_num, 1);
  if (t.is_server()) {
    find_server(t, read_this_endpoint(), names.this_endpoint, names.server_list);
  } else {
    t.trainer_id = to_int(require(env, names.trainer_id, names.style), names.trainer_id, 0);
    check_trainer_id(t, names.trainer_id, names.trainer_num);
  }
  return t;
}

Topology ps_style1(const Environment& env) {
  const PsVariables names{"PS (TRAINING_ROLE)", "TRAINING_ROLE", "PADDLE_TRAINERS_NUM", "PADDLE_TRAINER_ID",
                          "PADDLE_PSERVERS_IP_PORT_LIST", "POD_IP:PADDLE_PORT"};
  Topology t = ps_topology(
      env, names, [&] { return split(require(env, names.server_list, names.style)); },
      [&] { return require(env, "POD_IP", names.style) + ":" + require(env, "PADDLE_PORT", names.style); });
  if (auto eps = get(env, "PADDLE_TRAINER_ENDPOINTS")) t.trainer_endpoints = split(*eps);
  if (auto ip = get(env, "POD_IP"); !t.is_server() && ip && get(env, "PADDLE_PORT"))
    t.current_endpoint = *ip + ":" + *get(env, "PADDLE_PORT");
  return t;
}

Topology ps_style2(const Environment& env) {
  const PsVariables names{"PS (PADDLE_PSERVER_IPS)", "PADDLE_TRAINING_ROLE", "PADDLE_TRAINERS", "PADDLE_TRAINER_ID",
                          "PADDLE_PSERVER_IPS", "PADDLE_CURRENT_IP:PADDLE_PSERVER_PORT"};
  std::string port;
  auto ips_on_the_port = [&] {
    port = require(env, "PADDLE_PSERVER_PORT", names.style);
    to_int(port, "PADDLE_PSERVER_PORT", 1);
    std::vector<std::string> endpoints;
    for (const auto& ip : split(require(env, names.server_list, names.style))) endpoints.push_back(ip + ":" + port);
    return endpoints;
  };
  return ps_topology(env, names, ips_on_the_port,
                     [&] { return require(env, "PADDLE_CURRENT_IP", names.style) + ":" + port; });
}

Topology ps_style3(const Environment& env) {
  const PsVariables names{"PS (PADDLE_PSERVER_ENDPOINTS)", "PADDLE_TRAINING_ROLE", "TRAINERS", "TRAINER_ID",
                          "PADDLE_PSERVER_ENDPOINTS", "PADDLE_CURRENT_ENDPOINT"};
  return ps_topology(
      env, names, [&] { return split(require(env, names.server_list, names.style)); },
      [&] { return require(env, names.this_endpoint, names.style); });
}

Topology collective(const Environment& env) {
  const std::string style = "collective (PADDLE_TRAINER_ENDPOINTS)";
  Topology t;
  t.kind = JobKind::kCollective;
  t.style = style;
  t.trainer_id = to_int(require(env, "PADDLE_TRAINER_ID", style), "PADDLE_TRAINER_ID", 0);
  t.trainer_num = to_int(require(env, "PADDLE_TRAINERS_NUM", style), "PADDLE_TRAINERS_NUM", 1);
  t.trainer_endpoints = split(require(env, "PADDLE_TRAINER_ENDPOINTS", style));
  t.current_endpoint = require(env, "PADDLE_CURRENT_ENDPOINT", style);
  check_trainer_id(t, "PADDLE_TRAINER_ID", "PADDLE_TRAINERS_NUM");
  if (static_cast<int>(t.trainer_endpoints.size()) != t.trainer_num)
    throw TopologyError(fmt::format("PADDLE_TRAINER_ENDPOINTS lists {} endpoints but PADDLE_TRAINERS_NUM={}",
                                    t.trainer_endpoints.size(), t.trainer_num));
  if (t.trainer_endpoints[t.trainer_id] != t.current_endpoint)
    throw TopologyError(fmt::format("PADDLE_CURRENT_ENDPOINT={} is not entry {} (PADDLE_TRAINER_ID) of "
                                    "PADDLE_TRAINER_ENDPOINTS, which is {}",
                                    t.current_endpoint, t.trainer_id, t.trainer_endpoints[t.trainer_id]));
  return t;
}

}  // namespace

Topology topology_from_environment(const Environment& env) {
  if (get(env, "TRAINING_ROLE")) return ps_style1(env);
  if (get(env, "PADDLE_TRAINING_ROLE")) {
    if (get(env, "PADDLE_PSERVER_ENDPOINTS")) return ps_style3(env);
    if (get(env, "PADDLE_PSERVER_IPS")) return ps_style2(env);
    throw TopologyError(
        "PADDLE_TRAINING_ROLE is set but neither PADDLE_PSERVER_ENDPOINTS nor PADDLE_PSERVER_IPS is");
  }
  const bool any_collective = get(env, "PADDLE_TRAINER_ENDPOINTS") || get(env, "PADDLE_TRAINERS_NUM") ||
                              get(env, "PADDLE_CURRENT_ENDPOINT");
  if (any_collective) return collective(env);
  Topology single;
  single.style = "single process (no distributed variables set)";
  return single;
}

}  // namespace paddle::runtime
