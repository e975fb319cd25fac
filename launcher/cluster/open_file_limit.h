#pragma once
// The master's open-file limit, stated before it is hit: the launcher that hosts a job's master
// store holds one kept-alive connection per node (store/store_client.h), so before the
// rendezvous it raises its soft limit (ulimit -n) as far as the hard limit allows and refuses to
// start, in one line, when that still cannot hold every node; and it says when the kernel's
// listen queue is shorter than the nodes that connect at once.

#include <optional>
#include <string>

namespace paddle::launcher {

// Open files the master keeps besides its nodes' connections: its own files, logs, processes'
// pipes, and a node's second connection while it reports.
inline constexpr int kMasterSpareFiles = 128;

// Throws common::UsageError naming --nnodes, `ulimit -n`, the limit and the number needed when
// `nnodes` connections do not fit under this process's hard open-file limit.
void ensure_master_open_files(int nnodes);

// The kernel's listen queue is the other limit a master meets: nodes that connect at once past
// net.core.somaxconn (or net.ipv4.tcp_max_syn_backlog) are dropped and try again after 1 s,
// then 3 s, 7 s, ... A line saying so and what to raise, when `nnodes` exceed either; nothing
// when they fit or the settings cannot be read.
std::optional<std::string> listen_queue_warning(int nnodes);

}  // namespace paddle::launcher
