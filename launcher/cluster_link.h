#pragma once
// ClusterLink: this launcher's tie to the other launchers of a multi-node job, through the
// job's key-value store at the master (collective/kv_store_server.h: the same store the
// workers' rendezvous uses). The node whose address is the master's hosts the store.
//
// Keys, under JOB (the --job_id) and G (the generation: 0, then one more per restart):
//   JOB.gG.node.IP     a node's registration (rank_map.h), written when it joins generation G
//   JOB.gG.report.IP   why G ended on that node (job_failure.h); the first report anywhere
//                      makes every node stop its processes
//   JOB.gG.failed      the master's verdict: settle_time after the first report, the most
//                      likely root cause among them (JobFailure::Cause order, then the earliest),
//                      so every node names the same one; a process that lost its peer fails
//                      too, but it is not the cause
//   JOB.gG.done.IP     the node's processes all succeeded
//   JOB.hb.IP          a node's heartbeat, rewritten every heartbeat interval
// The master judges liveness on its own monotonic clock only: a node whose heartbeat is older
// than dead_after, or whose presence connection closed (its launcher was killed), gets a
// report "launcher lost". A node that cannot reach the master for dead_after reports the
// master lost itself.

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "collective/http_store.h"
#include "collective/kv_store_server.h"
#include "collective/liveness.h"
#include "common/error.h"
#include "launcher/job_failure.h"
#include "launcher/launch_log.h"
#include "launcher/rank_map.h"

namespace paddle::launcher {

// The nodes did not all arrive within --rendezvous_timeout.
class RendezvousTimeout : public common::Error {
 public:
  static constexpr int kExitCode = 124;
  explicit RendezvousTimeout(const std::string& message) : common::Error(message, kExitCode) {}
};

struct ClusterSettings {
  std::string master_ip;
  int master_port = 0;
  std::string job_id = "default";
  int nnodes = 1;
  std::string node_ip;  // this node's address, as the others reach it
  bool host_master = false;  // this node serves the store
  std::vector<std::string> ips_order;  // --ips, else the scheduler's node list: the rank order
  std::optional<int> node_rank;        // --rank, else the scheduler's
  std::string source;                  // where the settings came from, printed once
  std::chrono::milliseconds rendezvous_timeout{300000};
  std::chrono::milliseconds report_interval{5000};
  std::chrono::milliseconds heartbeat_interval{1000};
  std::chrono::milliseconds dead_after{5000};
  std::chrono::milliseconds settle_time{1000};
};

class ClusterLink {
 public:
  // Hosts the store when settings.host_master; starts heartbeats. Throws common::UsageError
  // when this node should host the master but cannot bind its address.
  ClusterLink(ClusterSettings settings, LaunchLog& log);
  ~ClusterLink();
  ClusterLink(const ClusterLink&) = delete;
  ClusterLink& operator=(const ClusterLink&) = delete;

  const ClusterSettings& settings() const { return settings_; }

  // Registers `me` for `generation` and waits for every node, printing "waiting for K of N
  // nodes; have: ...; missing: ..." every report interval. Returns the rank map. Throws
  // RendezvousTimeout naming the missing nodes, common::UsageError for registrations that
  // contradict each other, common::PeerError when the master cannot be reached.
  std::vector<RankedNode> join(int generation, const NodeRegistration& me);

  // Reports why `generation` ended here, so that every node stops; returns `failure`.
  JobFailure report(int generation, const JobFailure& failure);

  // The master's verdict on `generation`'s root cause, waiting for it up to settle_time plus
  // dead_after; `provisional` when the master cannot give one.
  JobFailure verdict(int generation, const JobFailure& provisional);

  // This node's processes of `generation` all succeeded. The master's launcher then waits for
  // every node to finish (the others need its store until they do), printing who it waits for;
  // returns a failure reported meanwhile.
  std::optional<JobFailure> finish(int generation);

  // A failure some node (or the master's liveness judge) reported for the joined generation:
  // the verdict once there is one, else the first report; polled without blocking.
  std::optional<JobFailure> failure();

 private:
  void watch();  // the background thread: heartbeats, the failure key, the master's judge
  // Every node of `generation` has registered: the rank map.
  std::vector<RankedNode> complete(int generation, const std::vector<std::string>& have);
  std::string rendezvous_status(const std::vector<std::string>& have, const std::string& unreachable) const;
  void judge_liveness(int generation, const std::vector<RankedNode>& members);
  // The registrations of `generation` contradict each other: say so, and on the master wait
  // (up to dead_after) until every node in `nodes` has found it too.
  void refuse(int generation, const std::vector<std::string>& nodes);
  void judge_root_cause(int generation);
  // The verdict, or the first report, of `generation` into failure_ (the master judges first).
  void poll_failures(int generation, const std::vector<RankedNode>& members, bool failed);
  JobFailure master_lost(const std::vector<RankedNode>& members) const;
  std::optional<std::chrono::milliseconds> heartbeat_age(int generation, const std::string& ip);
  std::string key(const std::string& suffix) const { return settings_.job_id + "." + suffix; }
  std::string generation_key(int generation, const std::string& suffix) const {
    return key("g" + std::to_string(generation) + "." + suffix);
  }

  ClusterSettings settings_;
  LaunchLog& log_;
  std::unique_ptr<collective::KvStoreServer> server_;
  std::unique_ptr<collective::HttpStore> store_;     // the calling thread's
  std::unique_ptr<collective::HttpStore> watcher_;   // the background thread's
  std::unique_ptr<collective::Liveness::Presence> presence_;

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  int generation_ = -1;  // joined; -1 before the first join
  std::vector<RankedNode> members_;
  std::optional<JobFailure> failure_;
  bool verdict_seen_ = false;
  std::optional<std::chrono::steady_clock::time_point> first_report_;  // the master's, of the generation
  std::thread thread_;
};

}  // namespace paddle::launcher
