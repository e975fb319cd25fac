#include "launcher/launch_plan.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <optional>

#include "common/error.h"
#include "launcher/address.h"
#include "launcher/gpu_devices.h"

namespace paddle::launcher {
namespace {

constexpr int kDefaultCollectivePort = 6070;
constexpr int kDefaultPsPort = 6170;

bool wants_ps(const LaunchOptions& o) {
  return o.server_num || o.worker_num || o.servers || o.workers;
}

std::string first_ps_flag(const LaunchOptions& o) {
  if (o.server_num) return "--server_num";
  if (o.worker_num) return "--worker_num";
  if (o.servers) return "--servers";
  return "--workers";
}

// --start_port, else FLAGS_START_PORT, else nothing.
std::optional<int> explicit_start_port(const LaunchOptions& o, const EnvMap& env) {
  if (o.start_port) return o.start_port;
  if (auto v = get_env(env, "FLAGS_START_PORT"); v && !v->empty()) return parse_port(*v, "FLAGS_START_PORT");
  return std::nullopt;
}

std::string join(const std::vector<std::string>& items, std::string_view sep = ",") {
  return fmt::format("{}", fmt::join(items, sep));
}

// This node's IP among `node_ips` (first-appearance order), for lists of several nodes.
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

// Ports for `count` endpoints: consecutive from a fixed start, or free ones.
std::vector<int> allocate_ports(std::optional<int> start, int offset, int count, PortSource& ports) {
  if (!start) return ports.take_free_ports(count);
  if (*start + offset + count - 1 > 65535)
    throw common::UsageError(fmt::format("--start_port: {} leaves no room for {} ports below 65536", *start, offset + count));
  std::vector<int> result;
  for (int i = 0; i < count; ++i) result.push_back(*start + offset + i);
  return result;
}

// This node's trainers: how many, their devices and the collective backend.
struct LocalTrainers {
  std::vector<std::string> devices;  // GPU ids; empty on the CPU
  int count = 1;
  int gpus_each = 0;
  std::string backend;
};

LocalTrainers local_trainers(const LaunchOptions& o, const HostFacts& host, std::vector<std::string>& notes) {
  std::vector<int> gpus;
  if (o.gpus) {
    GpuSelection selection = parse_gpu_selection(*o.gpus, get_env(host.env, "CUDA_VISIBLE_DEVICES"));
    gpus = selection.ids;
    if (!selection.note.empty()) notes.push_back(selection.note);
  } else {
    for (int i = 0; i < host.gpu_count; ++i) gpus.push_back(i);
  }
  LocalTrainers t;
  const bool gpu_mode = !gpus.empty();
  for (int g : gpus) t.devices.push_back(std::to_string(g));
  t.count = o.nproc_per_node.value_or(gpu_mode ? static_cast<int>(gpus.size()) : 1);
  if (gpu_mode && gpus.size() % t.count != 0)
    throw common::UsageError(fmt::format("--nproc_per_node={} does not divide the {} GPUs ({})", t.count, gpus.size(),
                                         fmt::join(gpus, ",")));
  t.gpus_each = gpu_mode ? static_cast<int>(gpus.size()) / t.count : 0;
  t.backend = o.backend == "auto" ? (gpu_mode ? "nccl" : "gloo") : o.backend;
  if (t.backend == "nccl" && !gpu_mode)
    throw common::UsageError("--backend=nccl needs GPUs, but --gpus is not set and no GPU is visible");
  return t;
}

// This node's trainer processes, once plan.trainer_endpoints holds every node's in rank order.
void add_trainers(LaunchPlan& plan, const LocalTrainers& t, int first_rank, const std::string& world_device_ids,
                  const EnvList& job_env) {
  const int world = static_cast<int>(plan.trainer_endpoints.size());
  for (int i = 0; i < t.count; ++i) {
    ProcessSpec p;
    p.role = Role::kTrainer;
    p.local_index = i;
    p.rank = first_rank + i;
    p.endpoint = plan.trainer_endpoints[p.rank];
    std::vector<std::string> mine(t.devices.begin() + i * t.gpus_each, t.devices.begin() + (i + 1) * t.gpus_each);
    auto& env = p.env;
    env.emplace_back("PADDLE_TRAINER_ID", std::to_string(p.rank));
    env.emplace_back("PADDLE_CURRENT_ENDPOINT", p.endpoint);
    env.emplace_back("PADDLE_TRAINERS_NUM", std::to_string(world));
    env.emplace_back("PADDLE_TRAINER_ENDPOINTS", join(plan.trainer_endpoints));
    env.emplace_back("PADDLE_RANK_IN_NODE", std::to_string(i));
    env.emplace_back("PADDLE_LOCAL_DEVICE_IDS", join(mine));
    env.emplace_back("PADDLE_WORLD_DEVICE_IDS", world_device_ids);
    if (!t.devices.empty()) env.emplace_back("FLAGS_selected_gpus", join(mine));
    env.emplace_back("PADDLE_DISTRI_BACKEND", t.backend);
    add_torch_env(env, p.rank, world, i, t.count, plan.trainer_endpoints.front());
    env.insert(env.end(), job_env.begin(), job_env.end());
    plan.processes.push_back(std::move(p));
  }
}

LaunchPlan plan_collective(const LaunchOptions& o, const HostFacts& host, PortSource& port_source) {
  LaunchPlan plan;
  plan.mode = LaunchPlan::Mode::kCollective;
  std::vector<std::string> ips = parse_ip_list(o.ips, "--ips");
  if (ips.size() == 1) {
    if (o.host && *o.host != ips[0])
      throw common::UsageError(fmt::format("--host: {} is not in --ips={}", *o.host, ips[0]));
    plan.node_ip = ips[0];
  } else {
    plan.node_ip = find_this_node(ips, "--ips", o, host);
  }
  plan.node_count = static_cast<int>(ips.size());
  plan.node_rank = static_cast<int>(std::find(ips.begin(), ips.end(), plan.node_ip) - ips.begin());
  const LocalTrainers trainers = local_trainers(o, host, plan.notes);

  std::optional<int> start = explicit_start_port(o, host.env);
  if (ips.size() > 1 && !start) start = kDefaultCollectivePort;
  std::vector<int> local_ports = allocate_ports(start, 0, trainers.count, port_source);
  if (start) plan.fixed_local_ports = local_ports;
  for (const auto& ip : ips)
    for (int port : local_ports) plan.trainer_endpoints.push_back(fmt::format("{}:{}", ip, port));
  const std::vector<std::string> node_devices(ips.size(), join(trainers.devices, ":"));
  add_trainers(plan, trainers, plan.node_rank * trainers.count, join(node_devices), {});
  return plan;
}

LaunchPlan plan_ps(const LaunchOptions& o, const HostFacts& host, PortSource& port_source) {
  LaunchPlan plan;
  plan.mode = LaunchPlan::Mode::kPs;
  if (o.nproc_per_node)
    throw common::UsageError("--nproc_per_node applies to collective mode; in PS mode use --worker_num or --workers");

  std::optional<int> start = explicit_start_port(o, host.env);
  std::vector<Endpoint> servers, workers;
  if (o.servers) {
    servers = parse_endpoint_list(*o.servers, "--servers", true);
    if (o.server_num && *o.server_num != static_cast<int>(servers.size()))
      throw common::UsageError(fmt::format("--server_num={} disagrees with --servers, which lists {} server(s)",
                                   *o.server_num, servers.size()));
  }
  if (o.workers) {
    workers = parse_endpoint_list(*o.workers, "--workers", false);
    if (o.worker_num && *o.worker_num != static_cast<int>(workers.size()))
      throw common::UsageError(fmt::format("--worker_num={} disagrees with --workers, which lists {} worker(s)",
                                   *o.worker_num, workers.size()));
  }
  const int server_count = o.servers ? static_cast<int>(servers.size()) : o.server_num.value_or(1);
  const int worker_count = o.workers ? static_cast<int>(workers.size()) : o.worker_num.value_or(1);

  // Local counts run on 127.0.0.1. With a fixed start port: servers from start, workers after
  // them, then the rendezvous port, as Paddle numbers them.
  if (!o.servers)
    for (int port : allocate_ports(start, 0, server_count, port_source)) servers.push_back({"127.0.0.1", port});
  if (!o.workers)
    for (int port : allocate_ports(start, server_count, worker_count, port_source))
      workers.push_back({"127.0.0.1", port});
  for (size_t i = 0; i < workers.size(); ++i)
    if (!workers[i].port) workers[i].port = start.value_or(kDefaultPsPort) + server_count + static_cast<int>(i);
  const int http_port =
      o.http_port ? *o.http_port : allocate_ports(start, server_count + worker_count, 1, port_source).front();
  for (size_t i = 0; i < workers.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (workers[i] == workers[j])
        throw common::UsageError(fmt::format("--workers: endpoint {} is listed twice", workers[i].str()));
  for (const auto& w : workers)
    if (std::find(servers.begin(), servers.end(), w) != servers.end())
      throw common::UsageError(fmt::format("--workers: endpoint {} is also a server in --servers", w.str()));

  std::vector<std::string> node_ips;
  for (const auto* list : {&servers, &workers})
    for (const auto& e : *list)
      if (std::find(node_ips.begin(), node_ips.end(), e.ip) == node_ips.end()) node_ips.push_back(e.ip);
  plan.node_ip = node_ips.size() == 1 ? node_ips.front() : find_this_node(node_ips, "--servers/--workers", o, host);
  plan.node_count = static_cast<int>(node_ips.size());
  plan.node_rank = static_cast<int>(std::find(node_ips.begin(), node_ips.end(), plan.node_ip) - node_ips.begin());

  for (const auto& s : servers) plan.server_endpoints.push_back(s.str());
  for (const auto& w : workers) plan.trainer_endpoints.push_back(w.str());
  const std::string server_list = join(plan.server_endpoints);
  const std::string worker_list = join(plan.trainer_endpoints);
  const std::string http_endpoint = fmt::format("{}:{}", servers.front().ip, http_port);
  const std::string with_gloo = get_env(host.env, "PADDLE_WITH_GLOO").value_or("0");

  // GPUs for workers, one each, round robin, named as CUDA_VISIBLE_DEVICES expects.
  std::vector<std::string> worker_gpus;
  if (o.gpus) {
    parse_gpu_selection(*o.gpus, get_env(host.env, "CUDA_VISIBLE_DEVICES"));  // validates
    worker_gpus = split_list(*o.gpus, "--gpus");
  } else if (host.gpu_count > 0) {
    auto cvd = get_env(host.env, "CUDA_VISIBLE_DEVICES");
    if (cvd && !cvd->empty()) worker_gpus = split_list(*cvd, "CUDA_VISIBLE_DEVICES");
    else
      for (int i = 0; i < host.gpu_count; ++i) worker_gpus.push_back(std::to_string(i));
  }

  int local_servers = 0;
  for (size_t i = 0; i < servers.size(); ++i) {
    if (servers[i].ip != plan.node_ip) continue;
    ProcessSpec p;
    p.role = Role::kServer;
    p.rank = static_cast<int>(i);
    p.local_index = local_servers++;
    p.endpoint = servers[i].str();
    auto& env = p.env;
    env.emplace_back("PADDLE_PSERVERS_IP_PORT_LIST", server_list);
    env.emplace_back("PADDLE_TRAINER_ENDPOINTS", worker_list);
    env.emplace_back("PADDLE_PORT", std::to_string(*servers[i].port));
    env.emplace_back("TRAINING_ROLE", "PSERVER");
    env.emplace_back("PADDLE_TRAINERS_NUM", std::to_string(worker_count));
    env.emplace_back("POD_IP", servers[i].ip);
    env.emplace_back("PADDLE_WITH_GLOO", with_gloo);
    env.emplace_back("PADDLE_GLOO_RENDEZVOUS", "3");
    env.emplace_back("PADDLE_GLOO_HTTP_ENDPOINT", http_endpoint);
    if (o.servers || start) plan.fixed_local_ports.push_back(*servers[i].port);
    plan.processes.push_back(std::move(p));
  }
  int local_workers = 0;
  std::vector<size_t> local_worker_ids;
  for (size_t i = 0; i < workers.size(); ++i)
    if (workers[i].ip == plan.node_ip) local_worker_ids.push_back(i);
  for (size_t i : local_worker_ids) {
    ProcessSpec p;
    p.role = Role::kWorker;
    p.rank = static_cast<int>(i);
    p.local_index = local_workers++;
    p.endpoint = workers[i].str();
    auto& env = p.env;
    env.emplace_back("PADDLE_PSERVERS_IP_PORT_LIST", server_list);
    env.emplace_back("PADDLE_TRAINER_ENDPOINTS", worker_list);
    env.emplace_back("PADDLE_TRAINERS_NUM", std::to_string(worker_count));
    env.emplace_back("TRAINING_ROLE", "TRAINER");
    env.emplace_back("POD_IP", workers[i].ip);
    env.emplace_back("PADDLE_PORT", std::to_string(*workers[i].port));
    env.emplace_back("PADDLE_TRAINER_ID", std::to_string(i));
    env.emplace_back("PADDLE_WITH_GLOO", with_gloo);
    env.emplace_back("PADDLE_GLOO_RENDEZVOUS", "3");
    env.emplace_back("PADDLE_GLOO_HTTP_ENDPOINT", http_endpoint);
    if (!worker_gpus.empty()) {
      env.emplace_back("FLAGS_selected_gpus", "0");
      env.emplace_back("CUDA_VISIBLE_DEVICES", worker_gpus[p.local_index % worker_gpus.size()]);
    }
    add_torch_env(env, p.rank, worker_count, p.local_index, static_cast<int>(local_worker_ids.size()),
                  plan.trainer_endpoints.front());
    if (o.workers || start) plan.fixed_local_ports.push_back(*workers[i].port);
    plan.processes.push_back(std::move(p));
  }
  if (plan.processes.empty())
    throw common::UsageError(fmt::format("this node ({}) has no server or worker in --servers/--workers", plan.node_ip));
  return plan;
}

void finish_plan(LaunchPlan& plan, const LaunchOptions& o, std::vector<std::string> command, const HostFacts& host) {
  plan.command = std::move(command);
  plan.log_dir = o.log_dir;
  for (auto& p : plan.processes)
    p.log_file = fmt::format("{}/{}log.{}", o.log_dir, p.role == Role::kServer ? "server" : "worker", p.local_index);
  add_omp_threads(plan, host);
}

}  // namespace

std::string_view role_name(Role role) {
  switch (role) {
    case Role::kTrainer: return "trainer";
    case Role::kServer: return "server";
    case Role::kWorker: return "worker";
  }
  return "process";
}

std::string_view mode_name(LaunchPlan::Mode mode) {
  return mode == LaunchPlan::Mode::kPs ? "ps" : "collective";
}

const ProcessSpec& LaunchPlan::echoed_process() const {
  for (const auto& p : processes)
    if (p.role != Role::kServer) return p;
  return processes.front();
}

int LaunchPlan::world_size() const { return static_cast<int>(trainer_endpoints.size()); }

LaunchPlan make_launch_plan(const LaunchOptions& o, std::vector<std::string> command, const HostFacts& host,
                            PortSource& ports) {
  const bool ps = o.run_mode == "ps" || (o.run_mode.empty() && wants_ps(o));
  if (o.run_mode == "collective" && wants_ps(o))
    throw common::UsageError(fmt::format("--run_mode=collective conflicts with {}, which is a PS flag", first_ps_flag(o)));
  LaunchPlan plan = ps ? plan_ps(o, host, ports) : plan_collective(o, host, ports);
  finish_plan(plan, o, std::move(command), host);
  return plan;
}

std::vector<std::string> cluster_endpoints(const LaunchOptions& o, const HostFacts& host, const std::string& node_ip,
                                           PortSource& ports) {
  std::vector<std::string> notes;
  std::vector<std::string> endpoints;
  for (int port : allocate_ports(explicit_start_port(o, host.env), 0, local_trainers(o, host, notes).count, ports))
    endpoints.push_back(fmt::format("{}:{}", node_ip, port));
  return endpoints;
}

NodeRegistration register_node(const LaunchOptions& o, const HostFacts& host, const std::string& node_ip,
                               const std::string& hostname, std::vector<std::string> endpoints) {
  std::vector<std::string> notes;
  NodeRegistration me;
  me.ip = node_ip;
  me.hostname = hostname;
  me.requested_rank = o.node_rank;
  me.devices = join(local_trainers(o, host, notes).devices);
  me.max_restarts = o.max_restarts;
  me.endpoints = std::move(endpoints);
  return me;
}

LaunchPlan make_cluster_plan(const LaunchOptions& o, std::vector<std::string> command, const HostFacts& host,
                             const std::vector<RankedNode>& nodes, int node_rank, const EnvList& job_env) {
  LaunchPlan plan;
  plan.mode = LaunchPlan::Mode::kCollective;
  const RankedNode& me = nodes.at(static_cast<size_t>(node_rank));
  plan.node_ip = me.node.ip;
  plan.node_rank = node_rank;
  plan.node_count = static_cast<int>(nodes.size());
  const LocalTrainers trainers = local_trainers(o, host, plan.notes);
  std::vector<std::string> node_devices;
  for (const auto& n : nodes) {
    plan.trainer_endpoints.insert(plan.trainer_endpoints.end(), n.node.endpoints.begin(), n.node.endpoints.end());
    std::string devices = n.node.devices;
    std::replace(devices.begin(), devices.end(), ',', ':');
    node_devices.push_back(devices);
  }
  if (static_cast<int>(me.node.endpoints.size()) != trainers.count)
    throw common::PeerError(fmt::format("node {} registered {} endpoints for {} processes", me.node.ip,
                                        me.node.endpoints.size(), trainers.count));
  for (const auto& e : me.node.endpoints) plan.fixed_local_ports.push_back(std::stoi(e.substr(e.rfind(':') + 1)));
  add_trainers(plan, trainers, me.first_global_rank, join(node_devices), job_env);
  finish_plan(plan, o, std::move(command), host);
  return plan;
}

EnvMap child_environment(const EnvMap& launcher_env, const ProcessSpec& spec, int restart_count) {
  EnvMap env = launcher_env;
  for (const char* name : kUnsetInChildren) env.erase(name);
  for (const auto& [k, v] : spec.env) env[k] = v;
  env["PADDLE_RESTART_COUNT"] = std::to_string(restart_count);
  return env;
}

}  // namespace paddle::launcher
