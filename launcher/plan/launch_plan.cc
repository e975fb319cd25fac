#include "launcher/plan/launch_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "common/error.h"
#include "launcher/plan/address.h"
#include "launcher/plan/gpu_devices.h"
#include "launcher/plan/heter_stages.h"
#include "launcher/plan/plan_support.h"
#include "launcher/plan/ps_plan.h"
#include "launcher/plan/worker_contract.h"

namespace paddle::launcher {
namespace {

bool wants_ps(const LaunchOptions& o) {
  return o.server_num || o.worker_num || o.servers || o.workers || heter_flag_given(o);
}

std::string first_ps_flag(const LaunchOptions& o) {
  if (o.server_num) return "--server_num";
  if (o.worker_num) return "--worker_num";
  if (o.servers) return "--servers";
  if (o.workers) return "--workers";
  return heter_flag_given(o).value_or("--workers");
}

std::string log_name(Role role) {
  switch (role) {
    case Role::kServer: return "serverlog";
    case Role::kHeterWorker: return "heterlog";
    case Role::kTrainer:
    case Role::kWorker: break;
  }
  return "workerlog";
}

// This node's trainers: how many, their devices and the collective backend.
struct LocalTrainers {
  std::vector<std::string> devices;  // GPU (XPU, NPU) ids; empty on the CPU
  const DeviceNames* names = &device_names(DeviceKind::kGpu);
  int count = 1;
  int gpus_each = 0;
  std::string backend;
};

LocalTrainers local_trainers(const LaunchOptions& o, const HostFacts& host, std::vector<std::string>& notes) {
  std::vector<int> gpus;
  LocalTrainers t;
  t.names = &device_names(o.device_kind);
  if (o.gpus) {
    GpuSelection selection = parse_gpu_selection(*o.gpus, get_env(host.env, t.names->visible), *t.names);
    gpus = selection.ids;
    if (!selection.note.empty()) notes.push_back(selection.note);
  } else {
    for (int i = 0; i < host.gpu_count; ++i) gpus.push_back(i);
  }
  const bool gpu_mode = !gpus.empty();
  for (int g : gpus) t.devices.push_back(std::to_string(g));
  t.count = o.nproc_per_node.value_or(gpu_mode ? static_cast<int>(gpus.size()) : 1);
  if (gpu_mode && gpus.size() % t.count != 0)
    throw common::UsageError(fmt::format("--nproc_per_node={} does not divide the {} {}s ({})", t.count, gpus.size(),
                                         t.names->kind, fmt::join(gpus, ",")));
  t.gpus_each = gpu_mode ? static_cast<int>(gpus.size()) / t.count : 0;
  t.backend = o.backend == "auto" ? (gpu_mode ? t.names->backend : "gloo") : o.backend;
  if (t.backend == "nccl" && !(gpu_mode && o.device_kind == DeviceKind::kGpu))
    throw common::UsageError("--backend=nccl needs GPUs, but --gpus is not set and no GPU is visible");
  if (t.backend != "gloo" && t.backend != t.names->backend)
    throw common::UsageError(fmt::format("--backend={} does not drive the devices of {}; use {} or auto", t.backend,
                                         t.names->flag, t.names->backend));
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
    if (!t.devices.empty()) env.emplace_back(t.names->selected, join(mine));
    env.emplace_back("PADDLE_DISTRI_BACKEND", t.backend);
    if (!t.devices.empty() && *t.names->xccl) env.emplace_back("PADDLE_XCCL_BACKEND", t.names->xccl);
    // Paddle 2.6's launcher names the same ranks and sizes a second way (launch/controllers).
    env.emplace_back("PADDLE_GLOBAL_SIZE", std::to_string(world));
    env.emplace_back("PADDLE_LOCAL_SIZE", std::to_string(t.count));
    env.emplace_back("PADDLE_GLOBAL_RANK", std::to_string(p.rank));
    env.emplace_back("PADDLE_LOCAL_RANK", std::to_string(i));
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
  plan.node_ips = ips;
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
  add_trainers(plan, trainers, plan.node_rank * trainers.count, join(node_devices),
               socket_interface_env(o, host, plan.node_ip, plan.node_count));
  return plan;
}


void finish_plan(LaunchPlan& plan, const LaunchOptions& o, std::vector<std::string> command, const HostFacts& host) {
  plan.command = std::move(command);
  plan.log_dir = o.log_dir;
  for (auto& p : plan.processes) {
    p.log_file = fmt::format("{}/{}.{}", o.log_dir, log_name(p.role), p.local_index);
    p.error_file = fmt::format("{}/error.{}.{}.json", o.log_dir, role_name(p.role), p.rank);
    p.metrics_file = fmt::format("{}/metrics.{}.{}.jsonl", o.log_dir, role_name(p.role), p.rank);
    p.progress_page = fmt::format("{}/progress.{}.{}", o.log_dir, role_name(p.role), p.rank);
  }
  add_omp_threads(plan, host);
  add_worker_contract(plan, o, host);
}

}  // namespace

std::string_view role_name(Role role) {
  switch (role) {
    case Role::kTrainer: return "trainer";
    case Role::kServer: return "server";
    case Role::kWorker: return "worker";
    case Role::kHeterWorker: return "heter_worker";
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

bool is_ps_job(const LaunchOptions& o) {
  return o.run_mode == "ps" || o.run_mode == "ps-heter" || (o.run_mode.empty() && wants_ps(o));
}

LaunchPlan make_launch_plan(const LaunchOptions& o, std::vector<std::string> command, const HostFacts& host,
                            PortSource& ports) {
  const bool ps = is_ps_job(o);
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
                               const std::string& hostname, std::optional<int> rank, std::vector<std::string> endpoints) {
  std::vector<std::string> notes;
  NodeRegistration me;
  me.ip = node_ip;
  me.hostname = hostname;
  me.requested_rank = rank;
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
  EnvList env = job_env;
  for (auto& variable : socket_interface_env(o, host, plan.node_ip, plan.node_count)) env.push_back(std::move(variable));
  add_trainers(plan, trainers, me.first_global_rank, join(node_devices), env);
  finish_plan(plan, o, std::move(command), host);
  return plan;
}

EnvMap child_environment(const EnvMap& launcher_env, const ProcessSpec& spec, int restart_count) {
  EnvMap env = launcher_env;
  for (const char* name : kUnsetInChildren) env.erase(name);
  for (const auto& [name, value] : spec.env_backup_only) env.erase(name);
  for (const auto& [k, v] : spec.env) env[k] = v;
  env["PADDLE_RESTART_COUNT"] = std::to_string(restart_count);
  // Absolute: a script may change its directory.
  const auto absolute = [](const std::string& path) { return std::filesystem::absolute(path).lexically_normal().string(); };
  if (!spec.error_file.empty()) {
    env["PADDLE_ERROR_FILE"] = absolute(spec.error_file);
    env["TORCHELASTIC_ERROR_FILE"] = absolute(spec.error_file);
  }
  if (!spec.metrics_file.empty()) env["PADDLE_METRICS_FILE"] = absolute(spec.metrics_file);
  if (!spec.progress_page.empty()) env["PADDLE_PROGRESS_FILE"] = absolute(spec.progress_page);
  return env;
}

}  // namespace paddle::launcher
