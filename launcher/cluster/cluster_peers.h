#pragma once
// ClusterPeers: the JobPeers of a multi-node collective job (--master with --nnodes). Each
// generation this node registers with the master (its address, ports, devices, --rank), waits
// for every node, and plans its processes from the rank map that every node computes alike;
// failures and the job's end travel through the master (cluster_link.h).

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "launcher/cluster/cluster_link.h"
#include "launcher/plan/launch_plan.h"
#include "launcher/plan/port_reservation.h"
#include "launcher/supervise/supervisor.h"

namespace paddle::launcher {

// The cluster settings the options and the environment give (--master or PADDLE_MASTER: IP:PORT
// or etcd://HOST:PORT[,...]; --nnodes or PADDLE_NNODES: N, or MIN:MAX for an elastic job on
// etcd; --job_id or PADDLE_JOB_ID; --host or POD_IP, or the address that routes to the
// master); nothing for a one-node job. Throws common::UsageError naming the flag
// or variable at fault, or a loopback address given to a node on a real network.
std::optional<ClusterSettings> cluster_settings(const LaunchOptions& options, const HostFacts& host);

// A plain --ips collective job (no --master) gains the same control plane: the master is the
// first IP of --ips, one port below the trainers' first (--start_port, else 6070), and the
// nodes keep the ports and ranks `plan` gave them.
ClusterSettings ips_cluster_settings(const LaunchOptions& options, const LaunchPlan& plan);

class ClusterPeers : public JobPeers {
 public:
  // `fixed_endpoints`: this node's trainers' endpoints in every generation (a plain --ips job);
  // empty: fresh ports each generation.
  ClusterPeers(const LaunchOptions& options, std::vector<std::string> command, const HostFacts& host,
               PortReservation& ports, ClusterSettings settings, LaunchLog& log,
               std::vector<std::string> fixed_endpoints = {});

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

 private:
  const LaunchOptions& options_;
  std::vector<std::string> command_;
  const HostFacts& host_;
  PortReservation& ports_;
  LaunchLog& log_;
  std::vector<std::string> fixed_endpoints_;
  ClusterLink link_;
  LaunchPlan plan_;
};

}  // namespace paddle::launcher
