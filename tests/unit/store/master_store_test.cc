#include <doctest/doctest.h>

#include <thread>

#include "common/error.h"
#include "store/kv_store_server.h"
#include "store/master_store.h"

using namespace paddle::store;
using namespace std::chrono_literals;

namespace {

// A launcher's store on node `ip` of job "job", reaching the store `server` hosts.
MasterStore launcher_store(const KvStoreServer& server, const std::string& ip) {
  return MasterStore("127.0.0.1", server.port(), /*host=*/false, "job", ip, 5s, std::nullopt);
}

}  // namespace

TEST_CASE("the master's store is a ControlStore: add-if-absent keeps the first value; a range lists a prefix by key") {
  KvStoreServer server("127.0.0.1", 0);
  MasterStore store = launcher_store(server, "10.0.0.1");
  ControlStore& control = store;
  CHECK(control.add_if_absent("job.g0.failed", "first") == "first");
  CHECK(control.add_if_absent("job.g0.failed", "second") == "first");
  CHECK(control.get("job.g0.failed") == "first");
  CHECK(control.get("absent") == std::nullopt);
  control.put("job.g0.node.10.0.0.2", "b");
  control.put("job.g0.node.10.0.0.1", "a");
  control.put("job.g1.node.10.0.0.1", "c");
  const std::vector<ControlStore::Entry> range = control.range("job.g0.node.");
  REQUIRE(range.size() == 2);
  CHECK(range[0].key == "job.g0.node.10.0.0.1");
  CHECK(range[0].value == "a");
  CHECK(range[1].key == "job.g0.node.10.0.0.2");
  CHECK(range[0].order > range[1].order);  // written later
  CHECK(control.range("other.").empty());
  CHECK(control.describe() == "the master 127.0.0.1:" + std::to_string(server.port()));
}

TEST_CASE("the master's store: a watch answers later writes in the order they were written, and the nodes alive") {
  KvStoreServer server("127.0.0.1", 0);
  MasterStore first = launcher_store(server, "10.0.0.1");
  first.heartbeat();
  const int64_t after = first.watch({"job.g0."}, 0, 0ms).revision;
  std::thread writer([&] {
    std::this_thread::sleep_for(100ms);
    MasterStore second = launcher_store(server, "10.0.0.2");
    second.heartbeat();
    second.put("job.g0.z", "1");
    second.put("job.g0.a", "2");
  });
  std::vector<std::string> seen;
  int64_t at = after;
  while (seen.size() < 2) {
    const ControlStore::Changes changes = first.watch({"job.g0."}, at, 5000ms);
    REQUIRE_FALSE(changes.entries.empty());
    for (const auto& e : changes.entries) seen.push_back(e.key);
    at = changes.revision;
  }
  writer.join();
  CHECK(seen == std::vector<std::string>{"job.g0.z", "job.g0.a"});
  // The second launcher's connection closed with it: only the first is alive.
  CHECK(first.alive_nodes() == std::vector<std::string>{"10.0.0.1"});
  CHECK(first.gone({"10.0.0.1", "10.0.0.2"}).count("10.0.0.2") == 1);
}

TEST_CASE("a wait ended by stop_waiting returns at once and does not come back on a new connection") {
  KvStoreServer server("127.0.0.1", 0);
  MasterStore store = launcher_store(server, "10.0.0.1");
  store.put("k", "v");  // the kept connection is open
  std::optional<std::string> value = "not yet";
  std::thread waiter([&] {
    try {
      value = store.wait_for("never", 5000ms);
    } catch (const paddle::common::PeerError&) {
      value = std::nullopt;
    }
  });
  std::this_thread::sleep_for(200ms);  // the wait is parked at the server
  const auto started = std::chrono::steady_clock::now();
  store.stop_waiting();
  waiter.join();
  // A wait that reconnected to ask again would have waited its 5 s on the new connection.
  CHECK(std::chrono::steady_clock::now() - started < 1s);
  CHECK(value == std::nullopt);
}
