#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "launcher/job/job_state.h"
#include "launcher/job/status_command.h"
#include "tests/unit/launcher/test_support.h"

using namespace paddle::launcher;
using paddle::launcher::testing::cpu_host;
using paddle::launcher::testing::plan_for;

namespace {

std::string scratch_dir(const char* name) {
  const auto dir = std::filesystem::temp_directory_path() / (std::string("job_state_test_") + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace

TEST_CASE("job state: an attempt, a process's end and the job's end reach job.json, and read() gives them back") {
  const std::string dir = scratch_dir("cycle");
  LaunchPlan plan = plan_for({"--nproc_per_node=2", "--log_dir=" + dir, "t"}, cpu_host());
  JobState state(plan, 4100);
  state.begin_attempt(0);
  state.process(0).pid = 4101;
  state.process(0).state = "running";
  state.process(1).pid = 4102;
  state.process(1).state = "failed";
  state.process(1).ended = "exit code 3";
  REQUIRE(state.save());
  std::optional<nlohmann::json> written = JobState::read(dir);
  REQUIRE(written);
  CHECK((*written)["launcher_pid"] == 4100);
  CHECK((*written)["state"] == "running");
  REQUIRE((*written)["processes"].size() == 2);
  CHECK((*written)["processes"][1]["pid"] == 4102);
  CHECK((*written)["processes"][1]["ended"] == "exit code 3");
  CHECK((*written)["processes"][0]["role"] == "trainer");

  state.begin_attempt(1);  // a restart: every process starts again
  CHECK(state.process(1).state == "starting");
  state.finish("failed", 3, "trainer 1 (local 1) ended with exit code 3");
  REQUIRE(state.save());
  written = JobState::read(dir);
  REQUIRE(written);
  CHECK((*written)["state"] == "failed");
  CHECK((*written)["exit_status"] == 3);
  CHECK((*written)["restarts"] == 1);
  CHECK((*written)["root_cause"] == "trainer 1 (local 1) ended with exit code 3");
}

TEST_CASE("job state: read() finds nothing where job.json is absent or is not a job's state") {
  const std::string dir = scratch_dir("absent");
  CHECK_FALSE(JobState::read(dir));
  std::ofstream(std::filesystem::path(dir) / "job.json") << "[1, 2]";
  CHECK_FALSE(JobState::read(dir));
}

TEST_CASE("status table: a running job whose launcher is gone says so, with each process and the root cause") {
  nlohmann::json job = {{"launcher_pid", 0x7ffffff0},  // no such process
                        {"mode", "collective"},
                        {"state", "running"},
                        {"started", 1000.0},
                        {"restarts", 2},
                        {"root_cause", "node 1 lost"},
                        {"processes", {{{"role", "trainer"}, {"rank", 0}, {"pid", getpid()}, {"state", "running"}}}}};
  const std::string table = status_table(job, 1010.0);
  CHECK(table.find("job: launcher gone (collective, node 0 of 1)") != std::string::npos);
  CHECK(table.find("restarts 2, started 10 s ago") != std::string::npos);
  CHECK(table.find("trainer 0") != std::string::npos);
  CHECK(table.find("running") != std::string::npos);  // this test process is alive
  CHECK(table.find("root cause: node 1 lost") != std::string::npos);
}
