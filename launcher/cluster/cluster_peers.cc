#include "launcher/cluster/cluster_peers.h"


#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "common/error.h"
#include "common/parse.h"
#include "launcher/console/plan_report.h"
#include "launcher/plan/address.h"
#include "launcher/plan/exec_limits.h"
#include "launcher/plan/ps_plan.h"
#include "launcher/plan/scheduler_env.h"

namespace paddle::launcher {
namespace {

// The flag's value, else the variable's (empty counts as unset).
std::optional<std::string> flag_or_env(const std::optional<std::string>& flag, const HostFacts& host, const char* variable) {
  if (flag) return flag;
  if (auto v = get_env(host.env, variable); v && !v->empty()) return v;
  return std::nullopt;
}

// This node's address for the others: --host, POD_IP, the master's own address when it is on
// this machine, else the address the routes to the master leave from.
std::string this_node_address(const LaunchOptions& o, const HostFacts& host, const std::string& master_ip) {
  if (o.host) return *o.host;
  if (auto pod_ip = get_env(host.env, "POD_IP"); pod_ip && !pod_ip->empty()) return *pod_ip;
  const auto& local = host.local_addresses;
  if (std::find(local.begin(), local.end(), master_ip) != local.end() || is_loopback(master_ip)) return master_ip;
  if (auto source = route_source_address(master_ip)) return *source;
  throw common::UsageError(fmt::format("--master: no route from this node to {}; pass --host=IP, this node's address "
                                       "that the master reaches",
                                       master_ip));
}

struct NodeCount {
  int min = 1, max = 1;
};

// "N" or "MIN:MAX", from `what` (the flag or variable, for the error).
NodeCount parse_node_count(const std::string& text, const std::string& what) {
  const size_t colon = text.find(':');
  const auto number = [&](const std::string& part) {
    return static_cast<int>(common::parse_int<common::UsageError>(part, what + "=" + text, 1, 100000));
  };
  if (colon == std::string::npos) return {number(text), number(text)};
  NodeCount n{number(text.substr(0, colon)), number(text.substr(colon + 1))};
  if (n.min > n.max) throw common::UsageError(fmt::format("{}={}: MIN is above MAX", what, text));
  return n;
}

// The nodes' count: --nnodes, else PADDLE_NNODES, else the scheduler's; a flag that
// contradicts the scheduler is an error.
NodeCount node_count(const LaunchOptions& o, const HostFacts& host, const std::optional<SchedulerView>& scheduler) {
  std::optional<NodeCount> given;
  std::string given_text;
  if (o.nnodes) {
    given = parse_node_count(*o.nnodes, "--nnodes");
    given_text = "--nnodes=" + *o.nnodes;
  } else if (auto text = get_env(host.env, "PADDLE_NNODES"); text && !text->empty()) {
    given = parse_node_count(*text, "PADDLE_NNODES");
    given_text = "PADDLE_NNODES=" + *text;
  }
  if (given && scheduler && scheduler->nnodes && given->max != *scheduler->nnodes)
    throw common::UsageError(fmt::format("{} contradicts {}, which gives {} node(s)", given_text, scheduler->source,
                                         *scheduler->nnodes));
  if (given) return *given;
  if (scheduler && scheduler->nnodes) return {*scheduler->nnodes, *scheduler->nnodes};
  throw common::UsageError("--master needs --nnodes (or PADDLE_NNODES): the number of nodes in the job");
}

// etcd://HOST:PORT[,HOST:PORT]: the endpoints, each host resolved to its IPv4 address.
std::vector<store::EtcdEndpoint> etcd_endpoints(const std::string& master, const std::string& source) {
  std::vector<store::EtcdEndpoint> endpoints;
  const std::string list = master.substr(std::string("etcd://").size());
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string item = list.substr(start, comma - start);
    const common::Endpoint e = common::parse_endpoint<common::UsageError>(item, source + "=" + master);
    const auto ip = resolve_ipv4(e.host);
    if (!ip)
      throw common::UsageError(fmt::format("{}={}: '{}' does not resolve to an IPv4 address", source, master, e.host));
    endpoints.push_back({*ip, e.port});
    start = comma + 1;
  }
  return endpoints;
}

// --master, else PADDLE_MASTER, else the scheduler's master node one port below the trainers'.
std::optional<std::string> master_address(
    const LaunchOptions& o, const HostFacts& host, const std::optional<SchedulerView>& scheduler,
    const std::function<std::optional<std::string>(const std::string&, const std::string&)>& resolve) {
  if (auto m = flag_or_env(o.master, host, "PADDLE_MASTER")) return m;
  if (!scheduler || !scheduler->master_host) return std::nullopt;
  const auto ip = resolve(*scheduler->master_host, scheduler->source);
  if (!ip)
    throw common::UsageError(fmt::format("{}: the master node '{}' does not resolve to an IPv4 address; give --master=IP:PORT",
                                         scheduler->source, *scheduler->master_host));
  int port = scheduler->master_port.value_or(0);
  if (port == 0) port = o.start_port.value_or(6070) - 1;
  return fmt::format("{}:{}", *ip, port);
}

// A job whose nodes its lists fix (--ips, PS lists): every node of plan.node_ips, in their
// order, meeting at `master_port` on the first.
ClusterSettings fixed_nodes_settings(const LaunchOptions& o, const LaunchPlan& plan, int master_port) {
  ClusterSettings s;
  s.master_ip = plan.node_ips.front();
  s.master_port = master_port;
  s.nnodes = s.min_nodes = static_cast<int>(plan.node_ips.size());  // never elastic
  s.node_ip = plan.node_ip;
  s.host_master = plan.node_ip == s.master_ip;
  s.ips_order = plan.node_ips;
  s.rendezvous_timeout = std::chrono::milliseconds(static_cast<long>(o.rendezvous_timeout * 1000));
  return s;
}

}  // namespace

std::optional<ClusterSettings> cluster_settings(const LaunchOptions& o, const HostFacts& host) {
  return cluster_settings(o, host, detect_scheduler(host.env), nullptr);
}

std::optional<ClusterSettings> cluster_settings(const LaunchOptions& o, const HostFacts& host,
                                                const std::optional<SchedulerView>& scheduler, HostNameResolver* names) {
  const auto resolve = [names](const std::string& host_name, const std::string& what) -> std::optional<std::string> {
    if (names) return names->address(host_name, what);
    return resolve_ipv4(host_name);
  };
  if (!scheduler && !flag_or_env(o.master, host, "PADDLE_MASTER")) {
    if (o.nnodes && parse_node_count(*o.nnodes, "--nnodes").max > 1)
      throw common::UsageError(fmt::format("--nnodes={} needs --master=IP:PORT (or PADDLE_MASTER), where the nodes meet",
                                           *o.nnodes));
    return std::nullopt;
  }
  const NodeCount count = node_count(o, host, scheduler);
  const int nnodes = count.max;
  // A scheduler's one-node job is a plain one-node job.
  if (nnodes == 1 && !flag_or_env(o.master, host, "PADDLE_MASTER")) return std::nullopt;
  const auto master = master_address(o, host, scheduler, resolve);
  if (!master) {
    if (nnodes > 1)
      throw common::UsageError(fmt::format("{} runs {} launchers; give --master=IP:PORT of one node", scheduler->source, nnodes));
    return std::nullopt;
  }
  const std::string master_source = o.master ? "--master" : get_env(host.env, "PADDLE_MASTER") ? "PADDLE_MASTER" : scheduler->source;
  const bool etcd = master->starts_with("etcd://");
  if (count.min < count.max && !etcd)
    throw common::UsageError(fmt::format("--nnodes={}:{} is elastic, which needs --master=etcd://HOST:PORT (not {})",
                                         count.min, count.max, *master));
  if (count.min < count.max && o.node_rank)
    throw common::UsageError(fmt::format("--rank: the ranks of an elastic job (--nnodes={}:{}) follow the nodes present; "
                                         "drop --rank",
                                         count.min, count.max));
  if (o.servers || o.workers)
    throw common::UsageError(fmt::format("--servers/--workers: with {} each node gives --server_num and --worker_num, "
                                         "and the lists follow the rank map",
                                         master_source));
  ClusterSettings s;
  std::string store_ip;  // where this node's traffic to the job's store goes
  if (etcd) {
    s.etcd = etcd_endpoints(*master, master_source);
    store_ip = s.etcd.front().ip;
  } else {
    const common::Endpoint endpoint = common::parse_endpoint<common::UsageError>(*master, master_source);
    if (!is_ipv4(endpoint.host))
      throw common::UsageError(fmt::format("{}={}: '{}' is not an IPv4 address", master_source, *master, endpoint.host));
    s.master_ip = store_ip = endpoint.host;
    s.master_port = endpoint.port;
  }
  s.nnodes = nnodes;
  s.min_nodes = count.min;
  s.elastic_timeout = std::chrono::milliseconds(static_cast<long>(o.elastic_timeout * 1000));
  s.node_rank = o.node_rank;
  if (!s.node_rank && !s.elastic())
    if (auto text = get_env(host.env, "PADDLE_RANK"); text && !text->empty())
      s.node_rank = static_cast<int>(common::parse_int<common::UsageError>(*text, "PADDLE_RANK", 0, 99999));
  if (!s.node_rank && scheduler && !s.elastic()) s.node_rank = scheduler->node_rank;
  if (scheduler) s.source = scheduler->source;
  s.job_id = flag_or_env(o.job_id, host, "PADDLE_JOB_ID").value_or("default");
  if (!common::is_plain_name(s.job_id))
    throw common::UsageError(fmt::format("--job_id: '{}' may hold only letters, digits, '_', '-' and '.'", s.job_id));
  s.node_ip = this_node_address(o, host, store_ip);
  if (!is_ipv4(s.node_ip)) throw common::UsageError(fmt::format("--host: '{}' is not an IPv4 address", s.node_ip));
  if (is_loopback(store_ip) != is_loopback(s.node_ip))
    throw common::UsageError(fmt::format(
        "{} is {} but this node's address is {}: a loopback address cannot join nodes on a real network (a hostname "
        "mapped to 127.0.1.1 is the usual cause); this node's addresses are {}; pass --host=IP and a --master the "
        "other nodes reach",
        master_source, *master, s.node_ip, fmt::join(host.local_addresses, ", ")));
  s.host_master = !etcd && s.node_ip == s.master_ip;
  const auto ips = parse_ip_list(o.ips, "--ips");
  if (ips.size() > 1) s.ips_order = ips;
  else if (scheduler)
    for (const auto& name : scheduler->nodes)
      if (auto ip = resolve(name, scheduler->source)) s.ips_order.push_back(*ip);
  s.rendezvous_timeout = std::chrono::milliseconds(static_cast<long>(o.rendezvous_timeout * 1000));
  s.token = common::JobToken::from_environment(host.env, "the master store");
  return s;
}

ClusterSettings ips_cluster_settings(const LaunchOptions& o, const LaunchPlan& plan) {
  const common::Endpoint first = common::parse_endpoint<common::UsageError>(plan.trainer_endpoints.front(), "--ips");
  if (first.port - 1 < 1)
    throw common::UsageError(fmt::format("--start_port={}: the master of an --ips job listens one port below it", first.port));
  return fixed_nodes_settings(o, plan, first.port - 1);
}

EnvList cluster_job_env(const std::vector<RankedNode>& nodes, const std::string& job_id) {
  const NodeRegistration& node0 = nodes.front().node;
  if (node0.tcp_store.empty())
    throw common::PeerError(fmt::format("node 0 ({}) registered no port for PADDLE_MASTER: its paddle-launch is older "
                                        "than this node's; run one version on every node",
                                        node0.ip));
  return {{"PADDLE_MASTER", node0.tcp_store}, {"PADDLE_NNODES", std::to_string(nodes.size())}, {"PADDLE_JOB_ID", job_id}};
}

ClusterSettings ps_lists_cluster_settings(const LaunchOptions& o, const LaunchPlan& plan) {
  const std::string& node0 = plan.node_ips.front();
  const int first_server_port = common::parse_endpoint<common::UsageError>(plan.server_endpoints.front(), "--servers").port;
  const auto taken = [&](int port) {
    const std::string endpoint = fmt::format("{}:{}", node0, port);
    return std::ranges::count(plan.server_endpoints, endpoint) + std::ranges::count(plan.trainer_endpoints, endpoint) +
                   std::ranges::count(plan.heter_endpoints, endpoint) > 0 ||
           plan.ps_store_endpoint == endpoint;
  };
  int port = first_server_port - 1;
  while (port > 0 && taken(port)) --port;
  if (port < 1)
    throw common::UsageError(fmt::format("--servers: no port below {} is free on {} for the job's master",
                                         first_server_port, node0));
  return fixed_nodes_settings(o, plan, port);
}

ClusterPeers::ClusterPeers(const LaunchOptions& options, std::vector<std::string> command, const HostFacts& host,
                           PortReservation& ports, ClusterSettings settings, LaunchLog& log,
                           std::vector<std::string> fixed_endpoints)
    : options_(options),
      command_(std::move(command)),
      host_(host),
      ports_(ports),
      log_(log),
      fixed_endpoints_(std::move(fixed_endpoints)),
      link_(std::move(settings), log) {}

ClusterPeers::ClusterPeers(const LaunchOptions& options, const HostFacts& host, PortReservation& ports,
                           ClusterSettings settings, LaunchLog& log, LaunchPlan fixed_plan)
    : options_(options),
      command_(fixed_plan.command),
      host_(host),
      ports_(ports),
      log_(log),
      fixed_plan_(std::move(fixed_plan)),
      link_(std::move(settings), log) {}

NodeRegistration ClusterPeers::registration() {
  const ClusterSettings& s = link_.settings();
  if (fixed_plan_) {
    NodeRegistration me;
    me.ip = s.node_ip;
    me.hostname = host_name();
    me.max_restarts = options_.max_restarts;
    // Heter workers hold no rank: the lists below name them, and every node must agree on those.
    for (const auto& p : fixed_plan_->processes)
      if (p.role != Role::kHeterWorker) (p.role == Role::kServer ? me.server_endpoints : me.endpoints).push_back(p.endpoint);
    me.job_lists = job_lists_summary(fmt::format(
        "--servers={} --workers={}{} (Gloo store {})", fmt::join(fixed_plan_->server_endpoints, ","),
        fmt::join(fixed_plan_->trainer_endpoints, ","),
        fixed_plan_->heter_endpoints.empty() ? "" : fmt::format(" --heter_workers={}", fmt::join(fixed_plan_->heter_endpoints, ",")),
        fixed_plan_->ps_store_endpoint));
    return me;
  }
  if (is_ps_job(options_)) return register_ps_node(options_, host_, s.node_ip, host_name(), s.node_rank, ports_);
  NodeRegistration me = register_node(options_, host_, s.node_ip, host_name(), s.node_rank,
                                      fixed_endpoints_.empty() ? cluster_endpoints(options_, host_, s.node_ip, ports_)
                                                               : fixed_endpoints_);
  if (!fixed_endpoints_.empty()) me.job_lists = job_lists_summary(fmt::format("--ips={}", fmt::join(s.ips_order, ",")));
  return me;
}

int ClusterPeers::tcp_store_port(const NodeRegistration& me) {
  std::vector<std::string> used = me.endpoints;
  used.insert(used.end(), me.server_endpoints.begin(), me.server_endpoints.end());
  if (me.ps_store_port) used.push_back(fmt::format("{}:{}", me.ip, me.ps_store_port));
  if (fixed_plan_ && !fixed_plan_->ps_store_endpoint.empty()) used.push_back(fixed_plan_->ps_store_endpoint);
  // A free port is one the kernel picks from its ephemeral range; fixed endpoints (--start_port,
  // the lists) rarely lie there, but a clash would make rank 0's store fight a process for it.
  for (int attempt = 0; attempt < 16; ++attempt) {
    const int port = ports_.take_free_ports(1).front();
    const std::string endpoint = fmt::format("{}:{}", me.ip, port);
    if (std::find(used.begin(), used.end(), endpoint) == used.end()) return port;
  }
  throw common::UsageError(fmt::format("no free port on {} outside this node's endpoints for PADDLE_MASTER", me.ip));
}

const LaunchPlan& ClusterPeers::plan(int generation, int restarts_used) {
  const ClusterSettings& s = link_.settings();
  NodeRegistration me = registration();
  me.restarts_used = restarts_used;
  me.order = options_.sort_ip ? "sort_ip" : s.host_master ? "master" : "";
  me.tcp_store = fmt::format("{}:{}", s.node_ip, tcp_store_port(me));
  const std::string nodes_wanted = s.elastic() ? fmt::format("{} to {}", s.min_nodes, s.nnodes) : std::to_string(s.nnodes);
  log_.info(fmt::format("joining generation {} of job {} at {} as {} ({} nodes{})", generation, s.job_id, s.master_name(),
                        s.node_ip, nodes_wanted, s.source.empty() ? "" : "; from " + s.source));
  const JoinedGeneration joined = link_.join(generation, me);
  const std::vector<RankedNode>& nodes = *joined.nodes;
  const auto mine = std::find_if(nodes.begin(), nodes.end(), [&](const RankedNode& n) { return n.node.ip == s.node_ip; });
  const EnvList job_env = cluster_job_env(nodes, s.job_id);
  if (fixed_plan_) {
    if (mine->node_rank != fixed_plan_->node_rank)
      throw common::PeerError(fmt::format("the rank map makes this node ({}) node {}, but --servers/--workers make it node {}",
                                          s.node_ip, mine->node_rank, fixed_plan_->node_rank));
    plan_ = *fixed_plan_;
    for (auto& p : plan_.processes) p.env.insert(p.env.end(), job_env.begin(), job_env.end());
  } else if (is_ps_job(options_)) {
    plan_ = make_cluster_ps_plan(options_, command_, host_, nodes, mine->node_rank, job_env);
  } else {
    plan_ = make_cluster_plan(options_, command_, host_, nodes, mine->node_rank, job_env);
  }
  plan_.generation = joined.generation;
  plan_.restarts_used = joined.restarts_used;
  check_exec_limits(plan_);
  log_.info(fmt::format("rank map of generation {} (this node is node {}):\n{}", joined.generation, mine->node_rank,
                        rank_map_text(nodes, mine->node_rank)));
  write_endpoints_log(plan_, rank_map_text(nodes));
  announce_plan(plan_, log_);
  ports_.release_sockets();
  return plan_;
}

}  // namespace paddle::launcher
