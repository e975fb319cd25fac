#pragma once
// The master's open-file limit, stated before it is hit: the launcher that hosts a job's master
// store holds one kept-alive connection per node (collective/http_store.h), so before the
// rendezvous it raises its soft limit (ulimit -n) as far as the hard limit allows and refuses to
// start, in one line, when that still cannot hold every node.

namespace paddle::launcher {

// Open files the master keeps besides its nodes' connections: its own files, logs, processes'
// pipes, and a node's second connection while it reports.
inline constexpr int kMasterSpareFiles = 128;

// Throws common::UsageError naming --nnodes, `ulimit -n`, the limit and the number needed when
// `nnodes` connections do not fit under this process's hard open-file limit.
void ensure_master_open_files(int nnodes);

}  // namespace paddle::launcher
