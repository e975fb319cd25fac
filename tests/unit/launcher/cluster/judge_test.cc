#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "launcher/cluster/judge.h"
#include "launcher/supervise/job_failure.h"
#include "tests/unit/launcher/cluster/fake_control_store.h"
#include "tests/unit/launcher/cluster/job_failures.h"

using namespace paddle::launcher;
using namespace std::chrono_literals;
using paddle::launcher::testing::FakeControlStore;
using paddle::launcher::testing::process_failed;

namespace {

RankedNode member(int rank, const std::string& ip) {
  RankedNode n;
  n.node_rank = rank;
  n.first_global_rank = rank;
  n.node.ip = ip;
  n.node.hostname = "host" + std::to_string(rank);
  return n;
}

// The judge, its store and its clock; `watch()` hands the judge the reports its node's watch hears.
struct Scene {
  FakeControlStore store;
  Judge::Clock::time_point now{};
  std::vector<RankedNode> members{member(0, "10.0.0.1"), member(1, "10.0.0.2"), member(2, "10.0.0.3")};
  int64_t after = 0;
  Judge judge;

  explicit Scene(bool elastic = false, int nnodes = 3)
      : judge(store, {"job", "10.0.0.1", nnodes, elastic, 500ms, 5000ms, 1500ms}, [this] { return now; }) {}

  void round() {
    judge.round(0, members);
    const auto changes = store.watch({"job.g0.report."}, after, 0ms);
    after = changes.revision;
    for (const auto& e : changes.entries) judge.heard(e);
  }
  std::optional<JobFailure> verdict() {
    auto text = store.get("job.g0.failed");
    if (!text) return std::nullopt;
    return JobFailure::from_json(*text);
  }
};

}  // namespace

TEST_CASE("judge: a lost node is reported at once, and named the root cause once the reports settle") {
  Scene s;
  s.store.lost["10.0.0.3"] = "its launcher is gone (its connection to the master closed)";
  s.round();
  REQUIRE(s.store.get("job.g0.report.10.0.0.3"));
  CHECK(JobFailure::from_json(*s.store.get("job.g0.report.10.0.0.3")).cause == JobFailure::Cause::kLauncherLost);
  CHECK_FALSE(s.verdict());  // the others' processes still report what losing it did to them
  // A process on node 1 fails because its peer went: it reports after the launcher's loss.
  s.store.put("job.g0.report.10.0.0.2", process_failed(1, "10.0.0.2", 1).to_json().dump());
  s.now += 1499ms;
  s.round();
  CHECK_FALSE(s.verdict());
  s.now += 1ms;
  s.round();
  REQUIRE(s.verdict());
  CHECK(s.verdict()->cause == JobFailure::Cause::kLauncherLost);
  CHECK(s.verdict()->ip == "10.0.0.3");
  CHECK(s.verdict()->node_rank == 2);
}

TEST_CASE("judge: a report waits for a silent node up to dead_after; the node found gone meanwhile is the cause") {
  Scene s;
  s.store.put("job.g0.report.10.0.0.2", process_failed(1, "10.0.0.2", 1).to_json().dump());
  s.store.quiet = {"10.0.0.3"};  // killed: silent now, counted gone only dead_after later
  s.round();
  s.now += 1500ms + 4999ms;
  s.round();
  CHECK_FALSE(s.verdict());
  s.store.quiet.clear();
  s.store.lost["10.0.0.3"] = "its launcher is silent";
  s.now += 1ms;
  s.round();
  REQUIRE(s.verdict());
  CHECK(s.verdict()->cause == JobFailure::Cause::kLauncherLost);
  CHECK(s.verdict()->ip == "10.0.0.3");
}

TEST_CASE("judge: without a silent node the first process failure is the verdict after settle_time") {
  Scene s;
  s.store.put("job.g0.report.10.0.0.2", process_failed(1, "10.0.0.2", 7).to_json().dump());
  s.round();
  s.store.put("job.g0.report.10.0.0.1", process_failed(0, "10.0.0.1", 1).to_json().dump());
  s.now += 1500ms;
  s.round();
  REQUIRE(s.verdict());
  CHECK(s.verdict()->ip == "10.0.0.2");
  CHECK(s.verdict()->exit_status == 7);
  // The verdict is written once: a later report changes nothing.
  s.store.lost["10.0.0.3"] = "its launcher is gone";
  s.now += 10s;
  s.round();
  CHECK(s.verdict()->ip == "10.0.0.2");
}

TEST_CASE("judge: a node that wrote its done key and then went is not lost") {
  Scene s;
  s.store.put("job.g0.done.10.0.0.3", "1");
  s.store.lost["10.0.0.3"] = "its launcher is gone (its connection to the master closed)";
  s.now += 10s;
  s.round();
  CHECK_FALSE(s.store.get("job.g0.report.10.0.0.3"));
  CHECK_FALSE(s.verdict());
}

TEST_CASE("judge: an elastic job below its most nodes admits a newcomer, which stops the generation on purpose") {
  Scene s(/*elastic=*/true, /*nnodes=*/4);
  NodeRegistration newcomer;
  newcomer.ip = "10.0.0.4";
  newcomer.hostname = "host3";
  s.store.put("job.g1.node.10.0.0.4", newcomer.to_json().dump());
  s.round();
  REQUIRE(s.store.get("job.g0.report.10.0.0.4"));
  // Processes stopped for the newcomer fail after it; they are not the cause.
  s.store.put("job.g0.report.10.0.0.2", process_failed(1, "10.0.0.2", 1).to_json().dump());
  s.now += 1500ms;
  s.round();
  REQUIRE(s.verdict());
  CHECK(s.verdict()->cause == JobFailure::Cause::kNodeJoined);
  CHECK(s.verdict()->ip == "10.0.0.4");
  CHECK(s.verdict()->exit_status == 0);
}

TEST_CASE("judge: a full elastic job admits nobody") {
  Scene s(/*elastic=*/true, /*nnodes=*/3);
  NodeRegistration newcomer;
  newcomer.ip = "10.0.0.4";
  s.store.put("job.g1.node.10.0.0.4", newcomer.to_json().dump());
  s.round();
  CHECK_FALSE(s.store.get("job.g0.report.10.0.0.4"));
}

TEST_CASE("judge: thousands of silent nodes cost a round a few questions, not one each") {
  Scene s;
  s.members.clear();
  for (int i = 0; i < 4096; ++i) s.members.push_back(member(i, "10.1." + std::to_string(i / 250) + "." + std::to_string(i % 250)));
  // Under load many nodes are silent at once; the finished ones among them wrote their done key.
  for (int i = 1; i < 4096; ++i) s.store.quiet.insert(s.members[i].node.ip);
  for (int i = 1; i < 2048; ++i) s.store.put("job.g0.done." + s.members[i].node.ip, "1");
  s.store.put("job.g0.report.10.1.0.1", process_failed(1, "10.1.0.1", 1).to_json().dump());
  s.round();
  const int first = s.store.gets;
  CHECK(first <= 2048 + 4);  // each done node read once, then one silent node that is not done
  s.store.gets = 0;
  s.now += 1500ms;
  s.round();
  CHECK(s.store.gets <= 4);  // what it read stays known for the generation
  CHECK_FALSE(s.verdict());  // a silent node that has not finished still holds the verdict
  // Every silent node found gone at once is reported once, not once per round.
  for (int i = 2048; i < 4096; ++i) s.store.lost[s.members[i].node.ip] = "its launcher is silent";
  s.round();
  CHECK(s.store.adds == 2048);
  s.store.adds = s.store.gets = 0;
  s.round();
  CHECK(s.store.adds == 0);
  CHECK(s.store.gets <= 4);
}

TEST_CASE("judge: a hang stopped on every node is the cause, not the failures its stop leaves") {
  Scene s;
  JobFailure hung = process_failed(1, "10.0.0.2", 123);
  hung.cause = JobFailure::Cause::kProcessHung;
  hung.what = "hang: trainer 3 (node 1, local 1, pid 42) made no progress for 4 s: it is stopped (SIGSTOP)";
  s.store.put("job.g0.report.10.0.0.1", process_failed(0, "10.0.0.1", 1).to_json().dump());  // its peers stopped
  s.store.put("job.g0.report.10.0.0.2", hung.to_json().dump());
  s.round();
  s.now += 1500ms;
  s.round();
  REQUIRE(s.verdict());
  CHECK(s.verdict()->cause == JobFailure::Cause::kProcessHung);
  CHECK(s.verdict()->exit_status == 123);
  CHECK(s.verdict()->what == hung.what);
}

TEST_CASE("judge: a launcher lost outranks a hang") {
  Scene s;
  JobFailure hung = process_failed(1, "10.0.0.2", 123);
  hung.cause = JobFailure::Cause::kProcessHung;
  s.store.put("job.g0.report.10.0.0.2", hung.to_json().dump());
  s.store.lost["10.0.0.3"] = "its launcher is gone";
  s.round();
  s.now += 1500ms;
  s.round();
  REQUIRE(s.verdict());
  CHECK(s.verdict()->cause == JobFailure::Cause::kLauncherLost);
}
