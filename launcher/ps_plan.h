#pragma once
// The plan of a parameter-server job on this node: servers and workers from local counts
// (--server_num, --worker_num, on 127.0.0.1) or from lists across nodes (--servers, --workers),
// with Paddle's PS variables. Internal to launcher/: make_launch_plan (launch_plan.h) calls it.

#include "launcher/launch_plan.h"

namespace paddle::launcher {

// Throws common::UsageError naming the flag at fault.
LaunchPlan plan_ps(const LaunchOptions& o, const HostFacts& host, PortSource& port_source);

}  // namespace paddle::launcher
