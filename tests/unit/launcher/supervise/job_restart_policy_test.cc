#include "launcher/supervise/job_restart_policy.h"

#include <doctest/doctest.h>

#include "tests/unit/launcher/cluster/job_failures.h"

namespace paddle::launcher {
namespace {

JobFailure launcher_lost() {
  JobFailure f = testing::process_failed(1, "10.0.0.2", 1);
  f.cause = JobFailure::Cause::kLauncherLost;
  f.what = "launcher lost: no heartbeat for 10 s";
  return f;
}

TEST_CASE("the job restarts whole while restarts are left and a restart can mend the failure") {
  const JobFailure failed = testing::process_failed(3, "10.0.0.2", 17);
  struct Row {
    JobFailure root;
    int used, budget;
    bool restart;
    const char* line;
  } rows[] = {
      {failed, 0, 2, true, "restarting all 2 local process(es): restart 1 of 2 (PADDLE_RESTART_COUNT=1)"},
      {failed, 1, 2, true, "restarting all 2 local process(es): restart 2 of 2 (PADDLE_RESTART_COUNT=1)"},
      {failed, 2, 2, false, "giving up after 2 restart(s); exit status 17"},
      {failed, 0, 0, false, ""},
      {launcher_lost(), 0, 2, false, "not restarting: a restart cannot mend this (launcher lost: no heartbeat for 10 s); "
                                     "exit status 1"},
      {launcher_lost(), 2, 2, false, "giving up after 2 restart(s); exit status 1"},
      {launcher_lost(), 0, 0, false, ""},
  };
  for (const Row& row : rows) {
    INFO(row.line);
    const JobRestartVerdict v = judge_job_failure(row.root, row.used, row.budget, false, "all 2 local process(es)", 1);
    CHECK(v.restart == row.restart);
    CHECK(v.line == row.line);
  }
}

TEST_CASE("a hang restarts the job under --on_hang=restart and stops it under --on_hang=stop") {
  JobFailure hung = testing::process_failed(1, "10.0.0.2", 123);
  hung.cause = JobFailure::Cause::kProcessHung;
  hung.what = "hang: trainer 1 (local 1) made no progress for 30 s: it is stopped (SIGSTOP)";
  CHECK(judge_job_failure(hung, 0, 1, false, "all 2 local process(es)", 1).restart);
  const JobRestartVerdict stop = judge_job_failure(hung, 0, 1, true, "all 2 local process(es)", 1);
  CHECK_FALSE(stop.restart);
  CHECK(stop.line == "not restarting: the job hung (--on_hang=stop; hang: trainer 1 (local 1) made no progress for "
                     "30 s: it is stopped (SIGSTOP)); exit status 123");
}

}  // namespace
}  // namespace paddle::launcher
