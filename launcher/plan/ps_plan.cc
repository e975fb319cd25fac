#include "launcher/plan/ps_plan.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"
#include "launcher/plan/address.h"
#include "launcher/plan/gpu_devices.h"
#include "launcher/plan/heter_stages.h"
#include "launcher/plan/plan_support.h"

namespace paddle::launcher {
namespace {

// A plan whose every port is given: asking for a free one is a bug.
class FixedPortsOnly : public PortSource {
 public:
  std::vector<int> take_free_ports(int) override {
    throw std::logic_error("a --master PS plan has its ports from the registrations");
  }
};

// What every process of a PS job is told about the job.
struct PsJob {
  std::string server_list, worker_list, http_endpoint, with_gloo;
  int worker_count = 0;
  HeterStages heter;  // no stages: not a ps-heter job
};

void append(EnvList& env, const EnvList& more) { env.insert(env.end(), more.begin(), more.end()); }

// A ps-heter job's stage variables for a worker (stage 1), in the order Paddle 2.6 sets them
// (fleet/launch_utils.py, ParameterServerLauncher.start_pod_worker).
EnvList worker_stage_env(const PsJob& job) {
  const StageVariables v = stage_variables(job.heter, 1, job.worker_count, job.worker_list);
  return {{"PADDLE_STAGE_TRAINERS_NUM", v.stage_trainers},
          {"STAGE_ID", v.stage_id},
          {"STAGE_NUM", v.stage_num},
          {"PADDLE_PREVIOUS_HETER_TRAINER_IP_PORT_LIST", v.previous},
          {"PADDLE_NEXT_HETER_TRAINER_IP_PORT_LIST", v.next},
          {"PADDLE_ALL_HETER_TRAINER_IP_PORT_LIST", v.all},
          {"HETER_DEVICE_TYPE", v.device}};
}

// The Gloo variables every PS process ends its environment with.
void add_ps_gloo_env(EnvList& env, const PsJob& job) {
  env.emplace_back("PADDLE_WITH_GLOO", job.with_gloo);
  env.emplace_back("PADDLE_GLOO_RENDEZVOUS", "3");
  env.emplace_back("PADDLE_GLOO_HTTP_ENDPOINT", job.http_endpoint);
}

void add_ps_servers(LaunchPlan& plan, const PsJob& job, const std::vector<Endpoint>& servers, bool fixed_ports) {
  int local = 0;
  for (size_t i = 0; i < servers.size(); ++i) {
    if (servers[i].ip != plan.node_ip) continue;
    ProcessSpec p;
    p.role = Role::kServer;
    p.rank = static_cast<int>(i);
    p.local_index = local++;
    p.endpoint = servers[i].str();
    p.env = {{"PADDLE_PSERVERS_IP_PORT_LIST", job.server_list}, {"PADDLE_TRAINER_ENDPOINTS", job.worker_list}};
    if (!job.heter.stages.empty())
      p.env.emplace_back("PADDLE_ALL_HETER_TRAINER_IP_PORT_LIST", stage_variables(job.heter, 1, job.worker_count, "").all);
    append(p.env, {{"PADDLE_PORT", std::to_string(*servers[i].port)},
                   {"TRAINING_ROLE", "PSERVER"},
                   {"PADDLE_TRAINERS_NUM", std::to_string(job.worker_count)},
                   {"POD_IP", servers[i].ip}});
    add_ps_gloo_env(p.env, job);
    if (fixed_ports) plan.fixed_local_ports.push_back(*servers[i].port);
    plan.processes.push_back(std::move(p));
  }
}

// GPUs for PS workers, one each, round robin, named as CUDA_VISIBLE_DEVICES expects.
std::vector<std::string> ps_worker_gpus(const LaunchOptions& o, const HostFacts& host) {
  std::vector<std::string> gpus;
  if (o.gpus) {
    parse_gpu_selection(*o.gpus, get_env(host.env, "CUDA_VISIBLE_DEVICES"));  // validates
    return split_list(*o.gpus, "--gpus");
  }
  if (host.gpu_count == 0) return gpus;
  auto cvd = get_env(host.env, "CUDA_VISIBLE_DEVICES");
  if (cvd && !cvd->empty()) return split_list(*cvd, "CUDA_VISIBLE_DEVICES");
  for (int i = 0; i < host.gpu_count; ++i) gpus.push_back(std::to_string(i));
  return gpus;
}

void add_ps_workers(LaunchPlan& plan, const PsJob& job, const std::vector<Endpoint>& workers,
                    const std::vector<std::string>& gpus, bool fixed_ports) {
  std::vector<size_t> local;
  for (size_t i = 0; i < workers.size(); ++i)
    if (workers[i].ip == plan.node_ip) local.push_back(i);
  for (size_t k = 0; k < local.size(); ++k) {
    const size_t i = local[k];
    ProcessSpec p;
    p.role = Role::kWorker;
    p.rank = static_cast<int>(i);
    p.local_index = static_cast<int>(k);
    p.endpoint = workers[i].str();
    p.env = {{"PADDLE_PSERVERS_IP_PORT_LIST", job.server_list},
             {"PADDLE_TRAINER_ENDPOINTS", job.worker_list},
             {"PADDLE_TRAINERS_NUM", std::to_string(job.worker_count)}};
    if (!job.heter.stages.empty()) append(p.env, worker_stage_env(job));
    append(p.env, {{"TRAINING_ROLE", "TRAINER"},
                   {"POD_IP", workers[i].ip},
                   {"PADDLE_PORT", std::to_string(*workers[i].port)},
                   {"PADDLE_TRAINER_ID", std::to_string(i)}});
    add_ps_gloo_env(p.env, job);
    if (!gpus.empty()) {
      p.env.emplace_back("FLAGS_selected_gpus", "0");
      p.env.emplace_back("CUDA_VISIBLE_DEVICES", gpus[static_cast<size_t>(p.local_index) % gpus.size()]);
    }
    add_torch_env(p.env, p.rank, job.worker_count, p.local_index, static_cast<int>(local.size()), plan.trainer_endpoints.front());
    if (fixed_ports) plan.fixed_local_ports.push_back(*workers[i].port);
    plan.processes.push_back(std::move(p));
  }
}

// This node's heter workers, ranked by their place in PADDLE_ALL_HETER_TRAINER_IP_PORT_LIST (as
// Paddle's role maker numbers them), with Paddle 2.6's variables in its order
// (ParameterServerLauncher.start_pod_heter_worker); GPUs round robin, as for the workers.
void add_heter_workers(LaunchPlan& plan, const PsJob& job, const std::vector<std::string>& gpus, bool fixed_ports) {
  int rank = 0, local = 0;
  for (const HeterStage& stage : job.heter.stages) {
    const StageVariables v = stage_variables(job.heter, stage.id, job.worker_count, job.worker_list);
    for (const Endpoint& e : stage.endpoints) {
      if (e.ip != plan.node_ip) {
        ++rank;
        continue;
      }
      ProcessSpec p;
      p.role = Role::kHeterWorker;
      p.rank = rank++;
      p.local_index = local++;
      p.endpoint = e.str();
      p.env = {{"PADDLE_PSERVERS_IP_PORT_LIST", job.server_list},
               {"PADDLE_TRAINER_ENDPOINTS", job.worker_list},
               {"PADDLE_NEXT_HETER_TRAINER_IP_PORT_LIST", v.next},
               {"PADDLE_PREVIOUS_HETER_TRAINER_IP_PORT_LIST", v.previous},
               {"PADDLE_ALL_HETER_TRAINER_IP_PORT_LIST", v.all},
               {"HETER_DEVICE_TYPE", v.device},
               {"STAGE_ID", v.stage_id},
               {"STAGE_NUM", v.stage_num},
               {"PADDLE_PORT", std::to_string(*e.port)},
               {"TRAINING_ROLE", "HETER_TRAINER"},
               {"PADDLE_TRAINERS_NUM", std::to_string(job.worker_count)},
               {"PADDLE_STAGE_TRAINERS_NUM", v.stage_trainers},
               {"POD_IP", e.ip}};
      add_ps_gloo_env(p.env, job);
      if (!gpus.empty()) {
        p.env.emplace_back("FLAGS_selected_gpus", "0");
        p.env.emplace_back("CUDA_VISIBLE_DEVICES", gpus[static_cast<size_t>(p.local_index) % gpus.size()]);
      }
      if (fixed_ports) plan.fixed_local_ports.push_back(*e.port);
      plan.processes.push_back(std::move(p));
    }
  }
}

}  // namespace

LaunchPlan plan_ps(const LaunchOptions& o, const HostFacts& host, PortSource& port_source) {
  LaunchPlan plan;
  plan.mode = LaunchPlan::Mode::kPs;
  if (o.nproc_per_node)
    throw common::UsageError("--nproc_per_node applies to collective mode; in PS mode use --worker_num or --workers");
  // The nodes of a PS job come from --servers/--workers (or a --master's rank map), never from
  // --ips: a list of several would be silently ignored and each node would run a job of its own.
  if (const auto ips = parse_ip_list(o.ips, "--ips"); ips.size() > 1)
    throw common::UsageError(fmt::format("--ips={} lists {} nodes, but PS mode takes its nodes from --servers and "
                                         "--workers (or --master with --nnodes); drop --ips",
                                         o.ips, ips.size()));

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
  if (server_count == 0 || worker_count == 0)
    throw common::UsageError(fmt::format("{}: a PS job needs at least one server and one worker; only a node of a "
                                         "--master job may hold one role",
                                         server_count == 0 ? "--server_num=0" : "--worker_num=0"));
  for (size_t i = 0; i < workers.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (workers[i] == workers[j])
        throw common::UsageError(fmt::format("--workers: endpoint {} is listed twice", workers[i].str()));
  for (const auto& w : workers)
    if (std::find(servers.begin(), servers.end(), w) != servers.end())
      throw common::UsageError(fmt::format("--workers: endpoint {} is also a server in --servers", w.str()));
  HeterStages heter = plan_heter_stages(o, server_count, worker_count, start, port_source);
  std::vector<Endpoint> heter_workers = heter.endpoints();
  for (const auto& h : heter_workers)
    if (std::ranges::count(servers, h) + std::ranges::count(workers, h) > 0)
      throw common::UsageError(fmt::format("--heter_workers: endpoint {} is also a server's or a worker's", h.str()));

  std::vector<std::string> node_ips;
  for (const auto* list : {&servers, &workers, &heter_workers})
    for (const auto& e : *list)
      if (std::find(node_ips.begin(), node_ips.end(), e.ip) == node_ips.end()) node_ips.push_back(e.ip);
  if (node_ips.size() > 1 && o.heter_worker_num && !o.heter_workers)
    throw common::UsageError(fmt::format("--heter_worker_num={} runs heter workers on 127.0.0.1, but this job spans the "
                                         "nodes {}; list them with --heter_workers=IP:PORT,...;...",
                                         *o.heter_worker_num, join(node_ips)));
  // Every node must name the same store: on several nodes its port cannot be a free one.
  if (node_ips.size() > 1 && !start) start = kDefaultPsPort;
  const auto listed = [&](int port) {
    const Endpoint store{servers.front().ip, port};
    return std::ranges::count(servers, store) + std::ranges::count(workers, store) +
               std::ranges::count(heter_workers, store) > 0;
  };
  const int listed_count = server_count + worker_count + heter.count();
  int http_port = o.http_port ? *o.http_port : allocate_ports(start, listed_count, 1, port_source).front();
  if (o.http_port && listed(http_port))
    throw common::UsageError(fmt::format("--http_port={}: {}:{} is also a server's or worker's endpoint", http_port,
                                         servers.front().ip, http_port));
  while (start && listed(http_port)) ++http_port;  // the same on every node: the lists decide
  const char* lists = heter.stages.empty() ? "--servers/--workers" : "--servers/--workers/--heter_workers";
  plan.node_ip = node_ips.size() == 1 ? node_ips.front() : find_this_node(node_ips, lists, o, host);
  plan.node_ips = node_ips;
  plan.node_count = static_cast<int>(node_ips.size());
  plan.node_rank = static_cast<int>(std::find(node_ips.begin(), node_ips.end(), plan.node_ip) - node_ips.begin());

  for (const auto& s : servers) plan.server_endpoints.push_back(s.str());
  for (const auto& w : workers) plan.trainer_endpoints.push_back(w.str());
  for (const auto& h : heter_workers) plan.heter_endpoints.push_back(h.str());
  plan.ps_store_endpoint = fmt::format("{}:{}", servers.front().ip, http_port);
  const PsJob job{join(plan.server_endpoints), join(plan.trainer_endpoints), plan.ps_store_endpoint,
                  o.with_gloo.value_or(o.legacy ? "0" : "1"), worker_count, std::move(heter)};
  const std::vector<std::string> gpus = ps_worker_gpus(o, host);
  add_ps_servers(plan, job, servers, o.servers || start);
  add_ps_workers(plan, job, workers, gpus, o.workers || start);
  add_heter_workers(plan, job, gpus, o.heter_workers || start);
  if (plan.processes.empty())
    throw common::UsageError(fmt::format("this node ({}) has no process in {}", plan.node_ip, lists));
  if (plan.node_count == 1 && !o.servers && !o.workers) return plan;  // local counts: one node, on 127.0.0.1
  const EnvList socket = socket_interface_env(o, host, plan.node_ip, plan.node_count);
  for (auto& p : plan.processes) p.env.insert(p.env.end(), socket.begin(), socket.end());
  return plan;
}

NodeRegistration register_ps_node(const LaunchOptions& o, const HostFacts& host, const std::string& node_ip,
                                  const std::string& hostname, std::optional<int> rank, PortSource& ports) {
  if (o.servers || o.workers)
    throw common::UsageError("--servers/--workers: a --master PS job makes these lists from every node's --server_num and "
                             "--worker_num; give those instead");
  if (o.nproc_per_node)
    throw common::UsageError("--nproc_per_node applies to collective mode; in PS mode use --worker_num");
  if (wants_heter(o))
    throw common::UsageError(fmt::format("{}: a --master PS job has no heter workers; give every node's with "
                                         "--servers, --workers and --heter_workers instead of --master",
                                         heter_flag_given(o).value_or("--run_mode=ps-heter")));
  const int servers = o.server_num.value_or(1), workers = o.worker_num.value_or(1);
  if (servers + workers == 0)
    throw common::UsageError("--server_num=0 with --worker_num=0: this node would run nothing; give it a server or a worker");
  const std::vector<int> port_list = allocate_ports(explicit_start_port(o, host.env), 0, servers + workers + 1, ports);
  NodeRegistration me;
  me.ip = node_ip;
  me.hostname = hostname;
  me.requested_rank = rank;
  me.max_restarts = o.max_restarts;
  for (int i = 0; i < servers + workers; ++i)
    (i < servers ? me.server_endpoints : me.endpoints).push_back(fmt::format("{}:{}", node_ip, port_list[static_cast<size_t>(i)]));
  me.ps_store_port = port_list.back();
  return me;
}

LaunchPlan make_cluster_ps_plan(const LaunchOptions& o, std::vector<std::string> command, const HostFacts& host,
                                const std::vector<RankedNode>& nodes, int node_rank, const EnvList& job_env) {
  std::vector<std::string> servers, workers;
  for (const auto& n : nodes) {
    servers.insert(servers.end(), n.node.server_endpoints.begin(), n.node.server_endpoints.end());
    workers.insert(workers.end(), n.node.endpoints.begin(), n.node.endpoints.end());
  }
  if (servers.empty()) throw common::UsageError("--server_num: no node of the job runs a parameter server");
  if (workers.empty()) throw common::UsageError("--worker_num: no node of the job runs a worker");
  LaunchOptions lists = o;
  lists.servers = join(servers);
  lists.workers = join(workers);
  lists.server_num.reset();
  lists.worker_num.reset();
  lists.host = nodes.at(static_cast<size_t>(node_rank)).node.ip;
  // The store is on server 0's node (PADDLE_GLOO_HTTP_ENDPOINT names its address), so its port is
  // the one that node reserved: node 0 may hold workers alone.
  const auto server_node = std::find_if(nodes.begin(), nodes.end(), [](const RankedNode& n) { return !n.node.server_endpoints.empty(); });
  lists.http_port = server_node->node.ps_store_port;
  lists.start_port.reset();
  FixedPortsOnly no_free_ports;
  LaunchPlan plan = make_launch_plan(lists, std::move(command), host, no_free_ports);
  plan.node_rank = node_rank;
  plan.node_count = static_cast<int>(nodes.size());
  for (auto& p : plan.processes) p.env.insert(p.env.end(), job_env.begin(), job_env.end());
  return plan;
}

}  // namespace paddle::launcher
