#pragma once
// The plan of a parameter-server job on this node: servers and workers from local counts
// (--server_num, --worker_num, on 127.0.0.1) or from lists across nodes (--servers, --workers),
// with Paddle's PS variables. Internal to launcher/: make_launch_plan (launch_plan.h) calls it.

#include "launcher/plan/launch_plan.h"

namespace paddle::launcher {

// Throws common::UsageError naming the flag at fault.
LaunchPlan plan_ps(const LaunchOptions& o, const HostFacts& host, PortSource& port_source);

// A node of a --master PS job as it registers: --server_num servers, then --worker_num workers
// (1 and 1 by default), on ports from --start_port, else free ones; node 0 offers one more for
// the workers' Gloo store.
NodeRegistration register_ps_node(const LaunchOptions& o, const HostFacts& host, const std::string& node_ip,
                                  const std::string& hostname, std::optional<int> rank, PortSource& ports);

// This node's PS plan in a --master job whose rank map is `nodes`: the servers and workers of
// every node in rank order, as if given by --servers and --workers; `job_env` goes to every process.
LaunchPlan make_cluster_ps_plan(const LaunchOptions& o, std::vector<std::string> command, const HostFacts& host,
                                const std::vector<RankedNode>& nodes, int node_rank, const EnvList& job_env);

}  // namespace paddle::launcher
