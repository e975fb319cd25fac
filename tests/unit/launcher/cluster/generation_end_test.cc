#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "launcher/cluster/cluster_link.h"
#include "launcher/cluster/member_list.h"
#include "launcher/console/launch_log.h"
#include "launcher/supervise/job_failure.h"
#include "tests/unit/launcher/cluster/fake_control_store.h"
#include "tests/unit/launcher/cluster/link_fixtures.h"
#include "tests/unit/launcher/cluster/job_failures.h"

using namespace paddle::launcher;
using namespace std::chrono_literals;
using paddle::launcher::testing::FakeControlStore;
using paddle::launcher::testing::QuietLog;
using paddle::launcher::testing::registration;
using paddle::launcher::testing::process_failed;

namespace {

// A job of MIN to MAX nodes (fixed when they are equal) whose store this node hosts and judges.
ClusterSettings job_settings(const std::string& node_ip, int min_nodes, int nnodes) {
  ClusterSettings s;
  s.job_id = "job";
  s.master_ip = node_ip;
  s.master_port = 6069;
  s.host_master = true;
  s.node_ip = node_ip;
  s.min_nodes = min_nodes;
  s.nnodes = nnodes;
  s.settle_time = 100ms;
  s.elastic_timeout = 0ms;  // an elastic generation starts as soon as MIN nodes are there
  return s;
}

bool never_interrupted() { return false; }

// This node's ClusterLink over the fake store; the test plays the other nodes by writing their keys.
struct Scene {
  std::unique_ptr<FakeControlStore> owned = std::make_unique<FakeControlStore>();
  FakeControlStore& store = *owned;  // the link's, while it lives
  QuietLog quiet;
  LaunchLog& log = quiet.log;
  ClusterLink link;

  explicit Scene(ClusterSettings settings) : link(std::move(settings), log, std::move(owned)) {}

  void registers(int generation, const std::string& ip) {
    store.put("job.g" + std::to_string(generation) + ".node." + ip, registration(ip).to_json().dump());
  }
};

}  // namespace

TEST_CASE("generation end: two nodes' reports give one verdict, the earlier, returned once every node has acked it") {
  Scene s(job_settings("10.0.0.1", 2, 2));
  s.registers(0, "10.0.0.2");
  REQUIRE(s.link.join(0, registration("10.0.0.1")).nodes->size() == 2);
  s.store.put("job.g0.report.10.0.0.2", process_failed(1, "10.0.0.2", 7).to_json().dump());
  const JobFailure mine = process_failed(0, "10.0.0.1", 1);
  CHECK(s.link.report(0, mine).exit_status == 1);
  REQUIRE(s.store.get("job.g0.report.10.0.0.1"));
  CHECK(JobFailure::from_json(*s.store.get("job.g0.report.10.0.0.1")).exit_status == 1);

  auto verdict = std::async(std::launch::async, [&] { return s.link.verdict(0, mine, never_interrupted); });
  REQUIRE(s.store.wait_for("job.g0.failed", 10s));
  REQUIRE(s.store.wait_for("job.g0.ack.10.0.0.1", 10s));
  const auto acked = std::chrono::steady_clock::now();
  // The store lives here: it stays up until the other node has read the verdict too, or until
  // the verdict's wait for acks (2 s) gives up; only a stall of this test that long may see it end.
  const bool waited = verdict.wait_for(300ms) == std::future_status::timeout;
  CHECK((waited || std::chrono::steady_clock::now() - acked >= 1900ms));
  s.store.put("job.g0.ack.10.0.0.2", "1");
  REQUIRE(verdict.wait_for(10s) == std::future_status::ready);
  const JobFailure root = verdict.get();
  CHECK(root.cause == JobFailure::Cause::kProcessFailed);
  CHECK(root.ip == "10.0.0.2");
  CHECK(root.exit_status == 7);
  CHECK(JobFailure::from_json(*s.store.get("job.g0.failed")).ip == "10.0.0.2");
  CHECK_FALSE(s.link.membership_change(root));  // a fixed job's restart counts against --max_restarts
}

TEST_CASE("generation end: the node hosting the store finishes only once every node has written its done key") {
  Scene s(job_settings("10.0.0.1", 2, 2));
  s.registers(0, "10.0.0.2");
  s.link.join(0, registration("10.0.0.1"));
  auto finished = std::async(std::launch::async, [&] { return s.link.finish(0); });
  REQUIRE(s.store.wait_for("job.g0.done.10.0.0.1", 10s));
  CHECK(finished.wait_for(300ms) == std::future_status::timeout);
  s.store.put("job.g0.done.10.0.0.2", "1");
  REQUIRE(finished.wait_for(10s) == std::future_status::ready);
  CHECK_FALSE(finished.get());
}

TEST_CASE("generation end: a failure reported elsewhere while this node waits to finish ends the wait with it") {
  Scene s(job_settings("10.0.0.1", 2, 2));
  s.registers(0, "10.0.0.2");
  s.link.join(0, registration("10.0.0.1"));
  auto finished = std::async(std::launch::async, [&] { return s.link.finish(0); });
  REQUIRE(s.store.wait_for("job.g0.done.10.0.0.1", 10s));
  s.store.put("job.g0.report.10.0.0.2", process_failed(1, "10.0.0.2", 9).to_json().dump());
  REQUIRE(finished.wait_for(10s) == std::future_status::ready);
  const std::optional<JobFailure> failure = finished.get();
  REQUIRE(failure);
  CHECK(failure->ip == "10.0.0.2");
  CHECK(failure->exit_status == 9);
}

TEST_CASE("generation end: an elastic job goes on without a lost node while MIN remain, and restarts for exit 101") {
  Scene three(job_settings("10.0.0.1", 2, 3));
  three.registers(0, "10.0.0.2");
  three.registers(0, "10.0.0.3");
  REQUIRE(three.link.join(0, registration("10.0.0.1")).nodes->size() == 3);
  JobFailure lost;
  lost.cause = JobFailure::Cause::kLauncherLost;
  lost.node_rank = 2;
  lost.ip = "10.0.0.3";
  lost.what = "its launcher is gone";
  CHECK(three.link.membership_change(lost) == "node 2 (10.0.0.3) left; 2 node(s) remain, at least the 2 --nnodes asks for");
  const JobFailure restart_me = process_failed(1, "10.0.0.2", 101);
  CHECK(three.link.membership_change(restart_me) ==
        "trainer 1 (local 0) ended with exit code 101 asked for a restart (exit status 101)");
  CHECK_FALSE(three.link.membership_change(process_failed(1, "10.0.0.2", 1)));

  Scene two(job_settings("10.0.0.1", 2, 3));
  two.registers(0, "10.0.0.2");
  REQUIRE(two.link.join(0, registration("10.0.0.1")).nodes->size() == 2);
  lost.node_rank = 1;
  lost.ip = "10.0.0.2";
  CHECK_FALSE(two.link.membership_change(lost));  // one node is fewer than MIN: a restart, counted
}

TEST_CASE("elastic admission: a newcomer ends the generation on purpose and the next one admits it, at most MAX nodes") {
  Scene s(job_settings("10.0.0.2", 2, 3));
  s.registers(0, "10.0.0.3");
  const JoinedGeneration first = s.link.join(0, registration("10.0.0.2"));
  REQUIRE(first.nodes->size() == 2);
  CHECK(s.store.get("job.generation") == "0");

  // Two newcomers find generation 0 running without them and register for generation 1
  // (rendezvous.cc); the job has room for one.
  s.registers(1, "10.0.0.1");
  s.registers(1, "10.0.0.4");
  const std::optional<JobFailure> ended = s.link.wait_for_failure(10s);
  REQUIRE(ended);
  CHECK(ended->cause == JobFailure::Cause::kNodeJoined);
  CHECK(ended->ip == "10.0.0.1");
  CHECK(ended->exit_status == 0);
  CHECK(ended->what == "joined the job; generation 1 admits it (3 node(s) now)");
  CHECK_FALSE(s.store.get("job.g0.report.10.0.0.4"));

  s.store.put("job.g0.ack.10.0.0.3", "1");  // the other member has read the verdict
  const JobFailure root = s.link.verdict(0, *ended, never_interrupted);
  CHECK(root.cause == JobFailure::Cause::kNodeJoined);
  CHECK(root.ip == "10.0.0.1");
  CHECK(s.link.membership_change(root) == root.what);  // not a restart of --max_restarts

  // The members of generation 0 register again; generation 1 keeps them and takes the newcomers
  // up to MAX, in rank order.
  s.registers(1, "10.0.0.3");
  const JoinedGeneration next = s.link.join(1, registration("10.0.0.2"));
  CHECK(next.generation == 1);
  CHECK(next.restarts_used == 0);
  REQUIRE(next.nodes->size() == 3);
  CHECK((*next.nodes)[0].node.ip == "10.0.0.1");
  CHECK((*next.nodes)[1].node.ip == "10.0.0.2");
  CHECK((*next.nodes)[2].node.ip == "10.0.0.3");
  CHECK(s.store.get("job.generation") == "1");
}

TEST_CASE("rendezvous: a fixed job's next generation ends at once, naming a node of the last one whose launcher is gone") {
  // Found by the chaos soak: the master's node waited for it until --rendezvous_timeout.
  Scene s(job_settings("10.0.0.1", 2, 2));
  s.registers(0, "10.0.0.2");
  REQUIRE(s.link.join(0, registration("10.0.0.1")).nodes->size() == 2);
  s.store.lose("10.0.0.2", "its launcher is silent: nothing heard from it for 5.2 s");
  const auto started = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(s.link.join(1, registration("10.0.0.1")),
                       doctest::Contains("node 1 (10.0.0.2) left job job before the rendezvous of generation 1: its "
                                         "launcher is silent"),
                       paddle::common::PeerError);
  CHECK(std::chrono::steady_clock::now() - started < 2s);
}

namespace {

// The keys a run of 10.0.0.1 and 10.0.0.2 leaves in etcd when it stops without cleaning up.
void leave_an_earlier_runs_keys(FakeControlStore& store) {
  store.put("job.g0.members", encode_member_list({registration("10.0.0.1"), registration("10.0.0.2")}));
  store.put("job.g0.report.10.0.0.2", process_failed(1, "10.0.0.2", 1).to_json().dump());
  store.put("job.g0.failed", process_failed(1, "10.0.0.2", 1).to_json().dump());
  store.put("job.generation", "0");
}

ClusterSettings on_etcd(ClusterSettings s) {
  s.etcd = {{"10.0.0.9", 2379}};
  s.host_master = false;
  return s;
}

}  // namespace

TEST_CASE("stale state: a run started again with one --job_id on etcd drops the keys of the run before it, not its own") {
  // Found by the chaos soak: both nodes of the new run were alive, so the earlier run's keys
  // stayed, and its member list and verdict failed the new run at once, attempt after attempt.
  auto store = std::make_unique<FakeControlStore>();
  leave_an_earlier_runs_keys(*store);
  NodeRegistration fresh = registration("10.0.0.2");
  fresh.endpoints = {"10.0.0.2:7001"};  // the other node of the new run, registered first
  store->put("job.g0.node.10.0.0.2", fresh.to_json().dump());
  store->alive = {"10.0.0.1", "10.0.0.2"};
  FakeControlStore& keys = *store;
  QuietLog quiet;
  LaunchLog& log = quiet.log;
  ClusterLink link(on_etcd(job_settings("10.0.0.1", 2, 2)), log, std::move(store));
  CHECK_FALSE(keys.get("job.g0.members"));
  CHECK_FALSE(keys.get("job.g0.failed"));
  CHECK_FALSE(keys.get("job.g0.report.10.0.0.2"));
  CHECK_FALSE(keys.get("job.generation"));
  CHECK(keys.get("job.g0.node.10.0.0.2") == fresh.to_json().dump());
}

TEST_CASE("stale state: a launcher joining a live run on etcd removes nothing") {
  auto store = std::make_unique<FakeControlStore>();
  leave_an_earlier_runs_keys(*store);
  store->put("job.g0.node.10.0.0.2", registration("10.0.0.2").to_json().dump());  // the member, alive
  store->alive = {"10.0.0.2"};
  FakeControlStore& keys = *store;
  QuietLog quiet;
  LaunchLog& log = quiet.log;
  ClusterLink link(on_etcd(job_settings("10.0.0.3", 2, 3)), log, std::move(store));
  CHECK(keys.get("job.g0.members"));
  CHECK(keys.get("job.g0.failed"));
  CHECK(keys.get("job.generation") == "0");
}

namespace {

// Node 1 (10.0.0.2) of a two-node job whose master, node 0 (10.0.0.1), the test plays; the link
// counts the master lost after 300 ms of silence.
struct NodeOneScene {
  std::unique_ptr<FakeControlStore> owned = std::make_unique<FakeControlStore>();
  FakeControlStore& store = *owned;
  QuietLog quiet;
  LaunchLog& log = quiet.log;
  std::unique_ptr<ClusterLink> link;

  NodeOneScene() {
    store.judging = false;
    store.hosting = false;
    ClusterSettings s = job_settings("10.0.0.2", 2, 2);
    s.master_ip = "10.0.0.1";
    s.host_master = false;
    s.heartbeat_interval = 20ms;
    s.dead_after = 300ms;
    store.put("job.g0.members", encode_member_list({registration("10.0.0.1"), registration("10.0.0.2")}));
    link = std::make_unique<ClusterLink>(std::move(s), log, std::move(owned));
    REQUIRE(link->join(0, registration("10.0.0.2")).nodes->size() == 2);
  }

  // This launcher hears nothing from the master for longer than dead_after (a SIGSTOP past it),
  // until its watch has counted the master lost.
  void silence_past_dead_after() {
    store.unreachable = true;
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (!link->failure() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(10ms);
    REQUIRE(link->failure());
    CHECK(link->failure()->cause == JobFailure::Cause::kLauncherLost);
  }
};

}  // namespace

TEST_CASE("generation end: the done key decides: a node whose key reached the master succeeds though its paused watch counted the master lost") {
  SUBCASE("woken while the master still waits: the key reaches it, and the node finishes") {
    NodeOneScene s;
    s.silence_past_dead_after();
    s.store.unreachable = false;
    CHECK_FALSE(s.link->finish(0));
    CHECK(s.store.get("job.g0.done.10.0.0.2"));
  }
  SUBCASE("the master ends once it has the key: the node still finishes") {
    NodeOneScene s;
    s.silence_past_dead_after();
    s.store.unreachable = false;
    s.store.ranges_unanswered = true;  // gone right after the done key
    CHECK_FALSE(s.link->finish(0));
  }
  SUBCASE("the key cannot reach the master, which counted this node lost: the node fails, naming the master") {
    NodeOneScene s;
    s.silence_past_dead_after();
    const auto failure = s.link->finish(0);
    REQUIRE(failure);
    CHECK(failure->cause == JobFailure::Cause::kLauncherLost);
    CHECK(failure->ip == "10.0.0.1");
  }
  SUBCASE("a failure a node reported of the generation fails this node too, though its watch has not seen it") {
    NodeOneScene s;
    s.silence_past_dead_after();
    s.store.put_as_is("job.g0.report.10.0.0.1", process_failed(0, "10.0.0.1", 7).to_json().dump());
    s.store.unreachable = false;
    const auto failure = s.link->finish(0);
    REQUIRE(failure);
    CHECK(failure->exit_status == 7);
  }
}

TEST_CASE("generation end: the master does not end with success over a report written before a node's done key") {
  // The judge counted node 1 silent (paused past dead_after) and reported it; node 1 then woke and
  // wrote its done key. Node 1 finds the report and fails; so must the master, not exit 0.
  Scene s(job_settings("10.0.0.1", 2, 2));
  s.registers(0, "10.0.0.2");
  REQUIRE(s.link.join(0, registration("10.0.0.1")).nodes->size() == 2);
  JobFailure silent;
  silent.cause = JobFailure::Cause::kLauncherLost;
  silent.node_rank = 1;
  silent.ip = "10.0.0.2";
  silent.what = "its launcher is silent";
  s.store.put("job.g0.report.10.0.0.2", silent.to_json().dump());
  s.store.put("job.g0.done.10.0.0.2", "1");
  const auto failure = s.link.finish(0);
  REQUIRE(failure);
  CHECK(failure->ip == "10.0.0.2");
  CHECK(failure->cause == JobFailure::Cause::kLauncherLost);
}
