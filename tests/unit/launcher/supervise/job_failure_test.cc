#include <doctest/doctest.h>

#include "common/error.h"
#include "launcher/supervise/job_failure.h"

using namespace paddle::launcher;

namespace {

JobFailure trainer_failed() {
  JobFailure f;
  f.cause = JobFailure::Cause::kProcessFailed;
  f.node_rank = 1;
  f.ip = "10.0.0.2";
  f.hostname = "host-b";
  f.what = "trainer 3 (local 1) exited with code 17";
  f.exit_status = 17;
  f.log_file = "log/workerlog.1";
  f.tail = "step 10 loss nan\n";
  return f;
}

}  // namespace

TEST_CASE("a failure report travels between nodes as JSON and comes back whole") {
  JobFailure f = trainer_failed();
  f.own_account = "std::runtime_error: boom\nat #0 main at train_main.cc:42";
  const JobFailure back = JobFailure::from_json(f.to_json().dump());
  CHECK(back.to_json() == f.to_json());
  CHECK(back.cause == JobFailure::Cause::kProcessFailed);
  CHECK(back.stops_job() == false);
  f.cause = JobFailure::Cause::kLauncherLost;
  CHECK(JobFailure::from_json(f.to_json().dump()).stops_job());
}

TEST_CASE("a failure report reads as every node prints it: the node, what failed, its own account, the log") {
  JobFailure f = trainer_failed();
  CHECK(f.describe() == "node 1 (10.0.0.2, host-b): trainer 3 (local 1) exited with code 17; log: log/workerlog.1, "
                        "last lines:\nstep 10 loss nan\n");
  f.own_account = "std::runtime_error: boom\nat #0 main";
  CHECK(f.describe() == "node 1 (10.0.0.2, host-b): trainer 3 (local 1) exited with code 17\n"
                        "  std::runtime_error: boom\n  at #0 main\n  log: log/workerlog.1, last lines:\nstep 10 loss nan\n");
  JobFailure newcomer;
  newcomer.cause = JobFailure::Cause::kNodeJoined;
  newcomer.ip = "10.0.0.9";
  newcomer.hostname = "host-z";
  newcomer.what = "joins the job";
  CHECK(newcomer.describe() == "a new node (10.0.0.9, host-z): joins the job");
}

TEST_CASE("a malformed failure report is a peer error that shows the report") {
  CHECK_THROWS_WITH_AS(JobFailure::from_json(R"({"node_rank": 1})"),
                       doctest::Contains("the master holds a malformed failure report"), paddle::common::PeerError);
  CHECK_THROWS_AS(JobFailure::from_json("not json"), paddle::common::PeerError);
  // A cause from a newer launcher is read as the least likely one, not as garbage.
  nlohmann::json j = trainer_failed().to_json();
  j["cause"] = 99;
  CHECK(JobFailure::from_json(j.dump()).cause == JobFailure::Cause::kProcessHung);
}
