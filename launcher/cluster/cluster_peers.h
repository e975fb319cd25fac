#pragma once
// ClusterPeers: the JobPeers of a multi-node job (--master with --nnodes, --ips, or PS lists
// across nodes). Each generation this node registers with the master (its address, ports,
// devices, --rank, and a port kept for a Paddle program's TCPStore), waits for every node, and
// plans its processes from the rank map that every node computes alike; failures and the job's
// end travel through the master (cluster_link.h).
//
// Every process's PADDLE_MASTER is node 0's kept port, as Paddle's launcher gives pod 0's
// "candidate": rank 0 of a Paddle program binds its TCPStore there. It is never the launcher's
// master store, and it is fresh each generation, so a restarted rank 0 binds a port no earlier
// store holds. Our runtime never reads it: its collective store is rank 0's trainer endpoint,
// so the two never meet on one port.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "launcher/cluster/cluster_link.h"
#include "launcher/plan/host_names.h"
#include "launcher/plan/launch_plan.h"
#include "launcher/plan/port_reservation.h"
#include "launcher/plan/scheduler_env.h"
#include "launcher/supervise/supervisor.h"

namespace paddle::launcher {

// The cluster settings the options and the environment give (--master or PADDLE_MASTER: IP:PORT
// or etcd://HOST:PORT[,...]; --nnodes or PADDLE_NNODES: N, or MIN:MAX for an elastic job on
// etcd; --job_id or PADDLE_JOB_ID; --host or POD_IP, or the address that routes to the
// master); nothing for a one-node job. Throws common::UsageError naming the flag
// or variable at fault, or a loopback address given to a node on a real network.
std::optional<ClusterSettings> cluster_settings(const LaunchOptions& options, const HostFacts& host);
// The same, under the scheduler already read from host.env, whose host names `names` resolves
// (waiting for a name not known yet) once the flags are checked against it.
std::optional<ClusterSettings> cluster_settings(const LaunchOptions& options, const HostFacts& host,
                                                const std::optional<SchedulerView>& scheduler, HostNameResolver* names);

// A plain --ips collective job (no --master) gains the same control plane: the master is the
// first IP of --ips, one port below the trainers' first (--start_port, else 6070), and the
// nodes keep the ports and ranks `plan` gave them.
ClusterSettings ips_cluster_settings(const LaunchOptions& options, const LaunchPlan& plan);

// So does a PS job whose --servers/--workers span several nodes: the master is node 0 (the
// first address of the lists), on the first port below its first server's (6169 for 6170) that
// no endpoint of node 0 uses, and the nodes keep the plan the lists gave them. Through it a node
// that holds only servers stops them once every worker of the job has exited, and a failure on
// one node stops every node.
ClusterSettings ps_lists_cluster_settings(const LaunchOptions& options, const LaunchPlan& plan);

// What every process of a multi-node job is told of the job, from its rank map: PADDLE_MASTER
// (node 0's TCPStore port), PADDLE_NNODES and PADDLE_JOB_ID. Throws common::PeerError when node
// 0 registered no TCPStore port (a launcher of an older version).
EnvList cluster_job_env(const std::vector<RankedNode>& nodes, const std::string& job_id);

class ClusterPeers : public JobPeers {
 public:
  // `fixed_endpoints`: this node's trainers' endpoints in every generation (a plain --ips job);
  // empty: fresh ports each generation.
  ClusterPeers(const LaunchOptions& options, std::vector<std::string> command, const HostFacts& host,
               PortReservation& ports, ClusterSettings settings, LaunchLog& log,
               std::vector<std::string> fixed_endpoints = {});
  // A PS job from --servers/--workers lists: `fixed_plan` is this node's part in every generation.
  ClusterPeers(const LaunchOptions& options, const HostFacts& host, PortReservation& ports, ClusterSettings settings,
               LaunchLog& log, LaunchPlan fixed_plan);

  const LaunchPlan& plan(int generation, int restarts_used) override;
  JobFailure report(int generation, const JobFailure& failure) override { return link_.report(generation, failure); }
  std::optional<JobFailure> failure_elsewhere() override { return link_.failure(); }
  std::optional<JobFailure> finish(int generation) override { return link_.finish(generation); }
  JobFailure verdict(int generation, const JobFailure& provisional, const std::function<bool()>& interrupted) override {
    return link_.verdict(generation, provisional, interrupted);
  }
  std::optional<std::string> membership_change(const JobFailure& root) override { return link_.membership_change(root); }
  void workers_done(int generation) override { link_.workers_done(generation); }
  bool job_workers_done(int generation) override { return link_.job_workers_done(generation); }
  ControlPlaneFigures figures() override { return link_.figures(); }
  bool spans_nodes() const override { return true; }
  void share_hang(int generation, const std::string& findings) override { link_.share_hang(generation, findings); }
  std::optional<nlohmann::json> job_hang() override { return link_.job_hang(); }
  void share_straggler(int generation, const StragglerNews& news) override { link_.share_straggler(generation, news); }
  std::vector<StragglerNews> straggler_news() override { return link_.straggler_news(); }

 private:
  // What this node registers for a generation, before its TCPStore port.
  NodeRegistration registration();
  // A free port of this node that none of `me`'s endpoints uses.
  int tcp_store_port(const NodeRegistration& me);

  const LaunchOptions& options_;
  std::vector<std::string> command_;
  const HostFacts& host_;
  PortReservation& ports_;
  LaunchLog& log_;
  std::vector<std::string> fixed_endpoints_;
  std::optional<LaunchPlan> fixed_plan_;
  ClusterLink link_;
  LaunchPlan plan_;
};

}  // namespace paddle::launcher
