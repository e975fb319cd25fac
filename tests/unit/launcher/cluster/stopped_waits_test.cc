// Every wait of a multi-node launcher ends on SIGINT or SIGTERM within a bound, naming what it
// waited for: a table over the rendezvous (fixed, as the judge and as a node that waits for the
// member list; a restart's; elastic) and the master's wait for the others to finish.
#include <doctest/doctest.h>

#include <signal.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "launcher/cluster/cluster_link.h"
#include "launcher/console/launch_log.h"
#include "launcher/supervise/stop_signals.h"
#include "tests/unit/launcher/cluster/fake_control_store.h"
#include "tests/unit/launcher/cluster/link_fixtures.h"

using namespace paddle::launcher;
using namespace std::chrono_literals;
using paddle::launcher::testing::FakeControlStore;
using paddle::launcher::testing::QuietLog;
using paddle::launcher::testing::registration;

namespace {

// This node (10.0.0.1) of a job of MIN to MAX nodes over the fake store, its launcher's signals
// played by `signals`.
struct Scene {
  StopSignals signals;
  std::unique_ptr<FakeControlStore> owned = std::make_unique<FakeControlStore>();
  FakeControlStore& store = *owned;
  QuietLog quiet;
  LaunchLog& log = quiet.log;
  std::unique_ptr<ClusterLink> link;

  // `on_etcd`: the job meets in etcd (its store plays it), whose nodes wait for the member list
  // in turns of a second.
  Scene(int min_nodes, int nnodes, bool judges, bool on_etcd = false) {
    store.judging = store.hosting = judges;
    ClusterSettings s;
    if (on_etcd) s.etcd.push_back({"127.0.0.1", 2379});
    s.job_id = "job";
    s.master_ip = "10.0.0.1";
    s.master_port = 6069;
    s.host_master = judges;
    s.node_ip = "10.0.0.1";
    s.min_nodes = min_nodes;
    s.nnodes = nnodes;
    s.settle_time = 100ms;
    s.elastic_timeout = 60s;  // an elastic generation waits for more than MIN
    s.stop_signals = &signals;
    link = std::make_unique<ClusterLink>(std::move(s), log, std::move(owned));
  }

  void registers(int generation, const std::string& ip) {
    store.put("job.g" + std::to_string(generation) + ".node." + ip, registration(ip).to_json().dump());
  }
};

// Runs `wait` on a thread of its own, delivers `sig` once it has waited 300 ms, and returns what
// it threw and how long after the signal it ended.
std::pair<std::string, std::chrono::milliseconds> stop_during(Scene& scene, int sig, const std::function<void()>& wait) {
  auto waiting = std::async(std::launch::async, [&]() -> std::string {
    try {
      wait();
    } catch (const Stopped& e) {
      CHECK(e.exit_code() == 128 + sig);
      return e.what();
    }
    return "returned without a signal's Stopped";
  });
  REQUIRE(waiting.wait_for(300ms) == std::future_status::timeout);  // it waits
  const auto sent = std::chrono::steady_clock::now();
  scene.signals.deliver(sig);
  REQUIRE(waiting.wait_for(10s) == std::future_status::ready);
  return {waiting.get(), std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - sent)};
}

}  // namespace

TEST_CASE("stopped waits: a signal ends every wait of the cluster link within a bound, naming what it waited for") {
  struct Row {
    std::string name;
    int min_nodes, nnodes;
    bool judges;
    int signal;
    std::function<void(Scene&)> before;  // brings the scene to the wait
    std::function<void(Scene&)> wait;
    std::string named;  // what the message says it waited for
  };
  const auto join = [](int generation) { return [generation](Scene& s) { s.link->join(generation, registration("10.0.0.1")); }; };
  const auto nothing = [](Scene&) {};
  const auto both_joined = [](Scene& s) {
    s.registers(0, "10.0.0.2");
    REQUIRE(s.link->join(0, registration("10.0.0.1")).nodes->size() == 2);
  };
  const Row rows[] = {
      {"the judge's rendezvous", 2, 2, true, SIGINT, nothing, join(0),
       "received SIGINT while waiting in the rendezvous of job job (generation 0) at the fake store: waiting for 1 of 2 "
       "nodes; have: 10.0.0.1"},
      {"a node's wait for the member list", 2, 2, false, SIGTERM, nothing, join(0),
       "received SIGTERM while waiting in the rendezvous of job job (generation 0) at the fake store: waiting for the member list"},
      {"a restart's rendezvous", 2, 2, true, SIGTERM, both_joined, join(1),
       "received SIGTERM while waiting in the rendezvous of job job (generation 1) at the fake store: waiting for 1 of 2 "
       "nodes; have: 10.0.0.1"},
      {"an elastic rendezvous", 2, 3, true, SIGINT, nothing, join(0),
       "received SIGINT while waiting in the rendezvous of job job (generation 0) at the fake store: waiting for 1 of 2 to 3 nodes"},
      {"the master's wait for the others to finish", 2, 2, true, SIGTERM, both_joined,
       [](Scene& s) { s.link->finish(0); },
       "received SIGTERM while keeping the master store up, this node done, until node 1 (10.0.0.2) finish"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.name);
    Scene scene(row.min_nodes, row.nnodes, row.judges);
    row.before(scene);
    const auto [message, took] = stop_during(scene, row.signal, [&] { row.wait(scene); });
    CHECK(message.starts_with(row.named));
    CHECK(message.ends_with("; stopped, nothing was left running"));
    CHECK(took < 2s);
  }
}

TEST_CASE("a node whose lease ended (paused past it) leaves the rendezvous within a heartbeat, saying so") {
  // Found by the chaos soak (seed 44): a launcher paused past dead_after in an etcd job's fixed
  // rendezvous lost its registration with its lease, and waited for a member list that could not
  // come until the rendezvous timeout, the other node with it.
  for (const bool judges : {true, false}) {
    CAPTURE(judges);
    Scene scene(2, 2, judges, /*on_etcd=*/true);
    auto waiting = std::async(std::launch::async, [&]() -> std::string {
      try {
        scene.link->join(0, registration("10.0.0.1"));
      } catch (const paddle::store::LeaseEnded& e) {
        return e.what();
      }
      return "joined";
    });
    REQUIRE(waiting.wait_for(300ms) == std::future_status::timeout);  // it waits for the other node
    const auto ended = std::chrono::steady_clock::now();
    scene.store.lease_ended = true;
    REQUIRE(waiting.wait_for(5s) == std::future_status::ready);
    const std::string what = waiting.get();
    CHECK(what == "this node's lease at the fake store ended; this node leaves the rendezvous of job job (start its "
                  "launcher again to rejoin)");
    CHECK(std::chrono::steady_clock::now() - ended < 3s);  // a heartbeat, then the rest of a turn, not the timeout
  }
}

