#pragma once
// What the collective and the parameter-server plans share (launch_plan.cc, ps_plan.cc): the
// start port, this node's place in a list of node addresses, the torch-style variables,
// threads per process and port allocation. Internal to launcher/.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/plan/launch_plan.h"

namespace paddle::launcher {

inline constexpr int kDefaultCollectivePort = 6070;
inline constexpr int kDefaultPsPort = 6170;

// --start_port, else FLAGS_START_PORT, else nothing.
std::optional<int> explicit_start_port(const LaunchOptions& o, const EnvMap& env);

std::string join(const std::vector<std::string>& items, std::string_view sep = ",");

// This node's IP among `node_ips` (first-appearance order), for lists of several nodes:
// --host, else POD_IP, else the one local address in the list. Throws common::UsageError.
std::string find_this_node(const std::vector<std::string>& node_ips, std::string_view list_name, const LaunchOptions& o,
                           const HostFacts& host);

// RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT.
void add_torch_env(EnvList& env, int rank, int world, int local_rank, int local_world, const std::string& master_endpoint);

// OMP_NUM_THREADS = cores / local processes, unless the launcher's environment sets it.
void add_omp_threads(LaunchPlan& plan, const HostFacts& host);

// GLOO_SOCKET_IFNAME and NCCL_SOCKET_IFNAME for this node's workers: --iface, else (with
// several nodes) the interface holding `node_ip`, unless the launcher's environment sets them.
// Throws common::UsageError when --iface names no interface of this node.
EnvList socket_interface_env(const LaunchOptions& o, const HostFacts& host, const std::string& node_ip, int node_count);

// Ports for `count` endpoints: consecutive from `start` + `offset`, or free ones.
std::vector<int> allocate_ports(std::optional<int> start, int offset, int count, PortSource& ports);

}  // namespace paddle::launcher
