#pragma once
// ClusterLink: this launcher's tie to the other launchers of a multi-node job, through the
// job's control store (control_store.h): the HTTP store on the master node (the same store
// kind the workers' rendezvous uses), or etcd.
//
// Keys, under JOB (the --job_id) and G (the generation: 0, then one more per restart):
//   JOB.gG.node.IP     a node's registration (rank_map.h), written when it joins generation G
//   JOB.gG.members     the members of G, published once by the judge when every node (elastic:
//                      enough, below) has registered: the registrations in rank order,
//                      deflated (member_list.h). Every other node waits on this one key.
//   JOB.generation     an elastic job's newest generation with members: where newcomers join
//   JOB.gG.report.IP   why G ended on that node (job_failure.h); the first report anywhere
//                      makes every node stop its processes
//   JOB.gG.failed      the judge's verdict: settle_time after the first report, the most
//                      likely root cause among them (JobFailure::Cause order, then the earliest),
//                      so every node names the same one; a process that lost its peer fails
//                      too, but it is not the cause
//   JOB.gG.done.IP     the node's processes all succeeded
//   JOB.hb.IP          a node's heartbeat (etcd: on its lease)
// One launcher judges (the master's host; on etcd the holder of JOB.judge): a node the store
// counts as gone (control_store.h) gets a report "launcher lost". A node that cannot reach the
// store for dead_after reports the store lost itself.
//
// Elastic jobs (--nnodes=MIN:MAX, on etcd): generation G starts once MIN nodes have registered
// and either MAX have, or every live launcher has (G > 0: the survivors and newcomers of a
// restart), or elastic_timeout has passed since MIN were there. Later nodes register for G+1;
// the judge then ends G so that they are admitted (a node joining); a lost node ends G too,
// and the rest go on without it when at least MIN remain.
//
// The link's steps, each in its own file (torch's elastic agent: initialize, monitor, restart):
//   rendezvous.cc      join: the fixed or elastic rendezvous of a generation
//   node_watch.cc      the node's own watch: heartbeats, and the failures any node reported
//   judge.h            the judge (its own class): on the one judging launcher, liveness, newcomers,
//                      the root cause
//   generation_end.cc  a generation's end: report, verdict, membership change, finish
//   cluster_link.cc    the store the steps share, and the watch's thread

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "store/etcd_client.h"
#include "common/background_thread.h"
#include "common/error.h"
#include "common/job_token.h"
#include "store/control_store.h"
#include "launcher/cluster/hang_exchange.h"
#include "launcher/cluster/judge.h"
#include "launcher/cluster/member_list.h"
#include "launcher/console/launch_log.h"
#include "launcher/plan/rank_map.h"
#include "launcher/supervise/control_plane_figures.h"
#include "launcher/supervise/job_failure.h"
#include "launcher/supervise/stop_signals.h"
#include "launcher/supervise/straggler_watch.h"

namespace paddle::launcher {

// The nodes did not all arrive within --rendezvous_timeout.
class RendezvousTimeout : public common::Error {
 public:
  static constexpr int kExitCode = 124;
  explicit RendezvousTimeout(const std::string& message) : common::Error(message, kExitCode) {}
};

struct ClusterSettings {
  std::string master_ip;  // the HTTP master; empty with etcd
  int master_port = 0;
  std::vector<store::EtcdEndpoint> etcd;  // --master=etcd://...
  std::string job_id = "default";
  int nnodes = 1;     // the most nodes
  int min_nodes = 1;  // the fewest an elastic job runs with; nnodes otherwise
  std::string node_ip;  // this node's address, as the others reach it
  bool host_master = false;  // this node serves the store
  std::vector<std::string> ips_order;  // --ips, else the scheduler's node list: the rank order
  std::optional<int> node_rank;        // --rank, else the scheduler's
  std::string source;                  // where the settings came from, printed once
  std::chrono::milliseconds rendezvous_timeout{300000};
  std::chrono::milliseconds elastic_timeout{30000};
  std::chrono::milliseconds report_interval{5000};
  std::chrono::milliseconds heartbeat_interval{500};
  std::chrono::milliseconds dead_after{5000};
  std::chrono::milliseconds settle_time{1500};
  std::optional<common::JobToken> token;  // PADDLE_JOB_TOKEN, shared by every node of the job
  // The launcher's SIGINT and SIGTERM: every wait of the link ends on one, the rendezvous and the
  // master's wait for the others to finish by throwing Stopped. None (the unit tests): not watched.
  const StopSignals* stop_signals = nullptr;

  bool elastic() const { return min_nodes < nnodes; }
  // "the master 10.0.0.1:6069" or "etcd 10.0.0.5:2379".
  std::string master_name() const;
  // As PADDLE_MASTER gives it: "10.0.0.1:6069" or "etcd://10.0.0.5:2379".
  std::string master_url() const;
};

// A generation as this node joined it.
struct JoinedGeneration {
  int generation = 0;     // a node joining a running elastic job starts at the job's
  int restarts_used = 0;  // of --max_restarts, job-wide
  std::shared_ptr<const std::vector<RankedNode>> nodes;  // the rank map, shared with the link's watch
};

class ClusterLink {
 public:
  // Hosts the store when settings.host_master; starts heartbeats. Throws common::UsageError
  // when this node should host the master but cannot bind its address, common::PeerError when
  // etcd cannot be reached.
  // `member_lists` decodes the member lists this link reads (member_list.h); links in one
  // process may share one.
  ClusterLink(ClusterSettings settings, LaunchLog& log,
              std::shared_ptr<MemberLists> member_lists = std::make_shared<MemberLists>());
  // The same over `store`, which the caller opened instead of the settings (the unit tests' is
  // in memory).
  ClusterLink(ClusterSettings settings, LaunchLog& log, std::unique_ptr<store::ControlStore> store,
              std::shared_ptr<MemberLists> member_lists = std::make_shared<MemberLists>());
  ~ClusterLink();
  ClusterLink(const ClusterLink&) = delete;
  ClusterLink& operator=(const ClusterLink&) = delete;

  const ClusterSettings& settings() const { return settings_; }

  // The rendezvous (rendezvous.cc). Registers `me` for `generation` (or, elastic, the job's next
  // one) and waits for the nodes, printing "waiting for K of N nodes; have: ...; missing: ..."
  // every report interval.
  // Throws RendezvousTimeout naming the missing nodes, common::UsageError for registrations
  // that contradict each other, common::PeerError when the store cannot be reached.
  JoinedGeneration join(int generation, const NodeRegistration& me);

  // A generation's end (generation_end.cc).
  // Why the job goes on to its next generation without counting a restart: an elastic job's
  // nodes changed and at least MIN remain, or a process asked to be restarted (exit 101).
  std::optional<std::string> membership_change(const JobFailure& root) const;

  // Reports why `generation` ended here, so that every node stops; returns `failure`.
  JobFailure report(int generation, const JobFailure& failure);

  // The master's verdict on `generation`'s root cause, waiting for it up to settle_time plus
  // dead_after, or until `interrupted()`; `provisional` when the master cannot give one.
  // `interrupted` is called without the link's lock held: it may report() (a signal handler does).
  JobFailure verdict(int generation, const JobFailure& provisional, const std::function<bool()>& interrupted);

  // This node's processes of `generation` all succeeded: it writes its done key. The master's
  // launcher then waits for every node's (the others need its store until they do), printing who
  // it waits for; returns a failure reported meanwhile.
  // The done keys decide, so that every node gives one answer: the master ends with success once
  // it has every node's and no node reported a failure of `generation` (a report written before
  // a done key, such as the judge's of a node paused past dead_after, fails the job). A node
  // whose key reached the master succeeds with it unless the store holds such a report, even
  // when it then finds the master ended (its own watch, paused, counted the master lost). A node
  // whose key could not reach the master fails, the master lost, as the master counted it lost.
  std::optional<JobFailure> finish(int generation);

  // PS: this node's workers of `generation` have all exited 0 (JOB.gG.workers_done.IP); and
  // whether every node with workers has said so (false while the store cannot tell).
  void workers_done(int generation);
  bool job_workers_done(int generation);

  // The control plane's figures now, for the job page (node_watch.cc).
  ControlPlaneFigures figures();

  // A hang (hang_exchange.h): this node's findings go to the judge; the judge's latest verdict
  // over every node's, as the watch read it. share_hang throws common::PeerError when the store
  // cannot be reached.
  void share_hang(int generation, const std::string& findings);
  std::optional<nlohmann::json> job_hang();

  // A straggler's change on this node (supervise/straggler_watch.h): its line, under a key of its
  // own (JOB.gG.straggler.node.IP.N: a change is never overwritten by the next), to the launcher
  // that judges; there, the other nodes' lines heard since the last call. Throws
  // common::PeerError when the store cannot be reached.
  void share_straggler(int generation, const StragglerNews& news);
  std::vector<StragglerNews> straggler_news();

  // The node's own watch (node_watch.cc).
  // A failure some node (or the master's liveness judge) reported for the joined generation:
  // the verdict once there is one, else the first report; polled without blocking.
  std::optional<JobFailure> failure();
  // The same, waiting up to `wait` for one.
  std::optional<JobFailure> wait_for_failure(std::chrono::milliseconds wait);

 private:
  // The rendezvous (rendezvous.cc).
  JoinedGeneration join_fixed(int generation, const NodeRegistration& me);
  JoinedGeneration join_elastic(int generation, const NodeRegistration& me);
  // Whether an elastic `generation` may start with the nodes in `have`.
  bool may_start(int generation, const std::vector<std::string>& have,
                 std::optional<std::chrono::steady_clock::time_point> enough_since);
  // Fixes an elastic generation's members: earlier members first, then in rank order, at most nnodes.
  void close_generation(int generation, const std::vector<store::ControlStore::Entry>& registrations);
  // The rank map of the member list `members`, now the joined generation.
  JoinedGeneration complete(int generation, const std::string& members);
  // Throws Stopped naming `waiting_for()` (asked only then) once the launcher was signalled;
  // whether it was, for the waits that end without throwing.
  void throw_if_stopped(const std::function<std::string()>& waiting_for) const;
  // Throws LeaseEnded once the watch's heartbeat found the store counting this node gone (its
  // lease ran out while it was paused or cut off): its registration went with it, so the
  // rendezvous cannot complete with it, and it leaves instead of waiting to the timeout.
  void throw_if_lease_ended() const;
  bool stop_requested() const;
  // The joined generation's rank map now.
  std::shared_ptr<const std::vector<RankedNode>> members_now() const;
  // "waiting in the rendezvous of job J (generation G) at the master IP:PORT: STATUS".
  std::string waiting_in_rendezvous(int generation, const std::string& status) const;
  // Throws RendezvousTimeout with `status()` once rendezvous_timeout has passed since `started`.
  void check_rendezvous_time(std::chrono::steady_clock::time_point started, const std::function<std::string()>& status);
  std::string rendezvous_status(const std::vector<std::string>& have, const std::string& unreachable) const;
  // How long a node that does not judge waits for the member list before it looks again.
  std::chrono::milliseconds member_wait() const;
  // Whether the store answers a request of this launcher's own before `until`, asking again
  // after each failure.
  bool store_answers(int generation, std::chrono::steady_clock::time_point until);
  // For the judge of a later generation of a fixed job: the error naming a node of the last
  // generation that has not registered again and whose launcher the store counts as gone, so that
  // the rendezvous ends at once instead of waiting for it until --rendezvous_timeout.
  std::optional<std::string> member_left(int generation, const std::map<std::string, std::string>& registered);
  // The registrations of `generation` contradict each other: say so, and on the master wait
  // (up to dead_after) until every node in `nodes` has found it too.
  void refuse(int generation, const std::vector<std::string>& nodes);

  // The node's own watch (node_watch.cc).
  void watch(const std::stop_token& stop);  // the background thread: heartbeats, the failure key, the master's judge
  // One round: the judge's look (where this launcher judges), then one watch of the verdict and
  // (until this node knows of a failure, or always on the judge) the reports after revision
  // `after`, into failure_; returns the revision the watch covered.
  int64_t watch_failures(int generation, const std::vector<RankedNode>& members, bool failed, int64_t after);
  // The failure this node reports when the store stayed unreachable (`why`) for dead_after.
  JobFailure master_lost(const std::vector<RankedNode>& members, const std::string& why) const;


  // A generation's end (generation_end.cc) and the store (cluster_link.cc).
  void stop_judging();
  // After this node's done key reached the store: a failure of `generation` that a node reported
  // (one this node concluded from silence is not: the store has just answered), asked of the
  // store itself; nothing when there is none, or when the store has ended since.
  std::optional<JobFailure> reported_failure(int generation);
  // Removes the job's keys when every member has written its done key (etcd outlives the job).
  void forget_job_if_all_done(const std::string& done_prefix);
  // Waits until every node of `waiting` has written PREFIX+IP, `until` passes or `interrupted()`.
  void wait_for_nodes(const std::string& prefix, const std::vector<std::string>& waiting,
                      std::chrono::steady_clock::time_point until, const std::function<bool()>& interrupted);
  void clear_stale_state();
  std::string key(const std::string& suffix) const { return settings_.job_id + "." + suffix; }
  std::string generation_key(int generation, const std::string& suffix) const;

  ClusterSettings settings_;
  LaunchLog& log_;
  std::unique_ptr<store::ControlStore> store_;
  std::shared_ptr<MemberLists> member_lists_;

  // Held by the watcher through one round of judging (not its watch), and by stop_judging: once stop_judging
  // returns no judge is halfway through a round, so the last node's removal of the job's keys
  // cannot be followed by a report written on what those keys no longer say. Taken before mutex_.
  std::mutex judging_mutex_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;          // the watch: stop, or a generation joined
  std::condition_variable verdict_wake_;  // a failure known, the verdict seen, or the store lost
  int generation_ = -1;  // joined; -1 before the first join
  // The joined generation's rank map; shared, so that the watch's snapshot each round costs no copy.
  std::shared_ptr<const std::vector<RankedNode>> members_ = std::make_shared<const std::vector<RankedNode>>();
  std::optional<JobFailure> failure_;
  // failure_ is this node's own conclusion from the store's silence (master_lost), not what a
  // node reported: a store that answers later proves it wrong (this launcher was paused).
  bool failure_from_silence_ = false;
  bool verdict_seen_ = false;
  std::chrono::steady_clock::time_point store_answered_ = std::chrono::steady_clock::now();  // the watch's last answer
  std::optional<std::string> lease_ended_;  // the watch's heartbeat found the store counts this node gone
  std::atomic<uint64_t> heartbeats_missed_ = 0;  // the watch's rounds the store did not answer
  Judge judge_;  // used by the watch where this launcher judges
  HangExchange hang_;  // under mutex_
  std::vector<StragglerNews> straggler_news_;  // heard by the judge's watch, under mutex_
  uint64_t stragglers_shared_ = 0;             // this node's changes sent, under mutex_
  common::BackgroundThread thread_;  // the watch (node_watch.cc); its stop ends every wait here
  // A signal ends the store's wait in flight (the rendezvous' long poll), and any after it. Last,
  // so it is gone before the store it calls.
  std::optional<std::stop_callback<std::function<void()>>> on_stop_signal_;
};

}  // namespace paddle::launcher
