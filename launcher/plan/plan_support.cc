#include "launcher/plan/plan_support.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "common/error.h"
#include "launcher/plan/address.h"

namespace paddle::launcher {

std::optional<int> explicit_start_port(const LaunchOptions& o, const EnvMap& env) {
  if (o.start_port) return o.start_port;
  if (auto v = get_env(env, "FLAGS_START_PORT"); v && !v->empty()) return parse_port(*v, "FLAGS_START_PORT");
  return std::nullopt;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  return fmt::format("{}", fmt::join(items, sep));
}

std::string find_this_node(const std::vector<std::string>& node_ips, std::string_view list_name,
                           const LaunchOptions& o, const HostFacts& host) {
  auto listed = [&](const std::string& ip) {
    return std::find(node_ips.begin(), node_ips.end(), ip) != node_ips.end();
  };
  if (o.host) {
    if (!listed(*o.host))
      throw common::UsageError(fmt::format("--host: {} is not in {}={}", *o.host, list_name, join(node_ips)));
    return *o.host;
  }
  if (auto pod_ip = get_env(host.env, "POD_IP"); pod_ip && !pod_ip->empty()) {
    if (!listed(*pod_ip))
      throw common::UsageError(fmt::format("POD_IP: {} is not in {}={}; set --host to this node's address in the list",
                                   *pod_ip, list_name, join(node_ips)));
    return *pod_ip;
  }
  std::vector<std::string> matches;
  for (const auto& ip : host.local_addresses)
    if (listed(ip)) matches.push_back(ip);
  if (matches.size() == 1) return matches.front();
  if (matches.empty())
    throw common::UsageError(fmt::format(
        "this node is not in {}={}: its addresses are {}; pass --host=IP (or set POD_IP) to the address "
        "the other nodes reach it by (a hostname that resolves to 127.0.0.1 is the usual cause)",
        list_name, join(node_ips), host.local_addresses.empty() ? "none" : join(host.local_addresses, ", ")));
  throw common::UsageError(fmt::format("several addresses of this node are in {}: {}; choose one with --host",
                               list_name, join(matches, ", ")));
}

void add_torch_env(EnvList& env, int rank, int world, int local_rank, int local_world,
                   const std::string& master_endpoint) {
  auto colon = master_endpoint.rfind(':');
  env.emplace_back("RANK", std::to_string(rank));
  env.emplace_back("WORLD_SIZE", std::to_string(world));
  env.emplace_back("LOCAL_RANK", std::to_string(local_rank));
  env.emplace_back("LOCAL_WORLD_SIZE", std::to_string(local_world));
  env.emplace_back("MASTER_ADDR", master_endpoint.substr(0, colon));
  env.emplace_back("MASTER_PORT", master_endpoint.substr(colon + 1));
}

void add_omp_threads(LaunchPlan& plan, const HostFacts& host) {
  if (get_env(host.env, "OMP_NUM_THREADS")) return;
  int local = static_cast<int>(plan.processes.size());
  int threads = std::max(1, static_cast<int>(host.cpu_cores) / std::max(1, local));
  for (auto& p : plan.processes) p.env.emplace_back("OMP_NUM_THREADS", std::to_string(threads));
}

std::vector<int> allocate_ports(std::optional<int> start, int offset, int count, PortSource& ports) {
  if (!start) return ports.take_free_ports(count);
  if (*start + offset + count - 1 > 65535)
    throw common::UsageError(fmt::format("--start_port: {} leaves no room for {} ports below 65536", *start, offset + count));
  std::vector<int> result;
  for (int i = 0; i < count; ++i) result.push_back(*start + offset + i);
  return result;
}

EnvList socket_interface_env(const LaunchOptions& o, const HostFacts& host, const std::string& node_ip, int node_count) {
  std::string name;
  if (o.iface) {
    const bool known = std::any_of(host.interfaces.begin(), host.interfaces.end(),
                                   [&](const LocalInterface& i) { return i.name == *o.iface; });
    if (!known) {
      std::vector<std::string> names;
      for (const auto& i : host.interfaces) names.push_back(fmt::format("{} ({})", i.name, i.ip));
      throw common::UsageError(fmt::format("--iface: this node has no interface '{}'; it has {}", *o.iface,
                                           names.empty() ? "none" : join(names, ", ")));
    }
    name = *o.iface;
  } else if (node_count > 1) {
    for (const auto& i : host.interfaces)
      if (i.ip == node_ip) name = i.name;
  }
  if (name.empty()) return {};
  EnvList env;
  for (const char* variable : {"GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME"})
    if (o.iface || !get_env(host.env, variable)) env.emplace_back(variable, name);
  return env;
}

}  // namespace paddle::launcher
