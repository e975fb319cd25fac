#include <doctest/doctest.h>

#include <sys/wait.h>

#include "launcher/supervise/worker_restart_policy.h"

using namespace paddle::launcher;

TEST_CASE("a failed PS worker restarts alone within its count, and says why when it does not") {
  const std::string who = "worker 2 (local 2, pid 4242)";
  struct Case {
    const char* what;
    int status, used, budget;
    bool servers_ended, restart;
    const char* line;
  };
  const Case cases[] = {
      {"killed, none used", W_EXITCODE(0, SIGKILL), 0, 2, false, true,
       "worker 2 (local 2, pid 4242) ended with signal SIGKILL (9); restarting it alone: restart 1 of 2 in place "
       "(--ps_worker_restarts), 4 in this job so far. The servers keep their tables and the other workers go on"},
      {"failed, one of two used", W_EXITCODE(1, 0), 1, 2, false, true, "restart 2 of 2 in place"},
      {"its count spent", W_EXITCODE(1, 0), 2, 2, false, false,
       "worker 2 (local 2, pid 4242) ended with exit code 1 after 2 restart(s) in place, all that "
       "--ps_worker_restarts=2 allows; its failure ends the job"},
      {"it cannot take up its part", W_EXITCODE(75, 0), 0, 2, false, false,
       "ended with exit code 75: restarted in place, it cannot take up its part alone"},
      {"the servers have ended", W_EXITCODE(0, SIGKILL), 0, 2, true, false, "after the servers had ended"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const WorkerRestartVerdict v = judge_worker_failure(who, c.status, c.used, c.budget, 3, c.servers_ended);
    CHECK(v.restart == c.restart);
    CHECK(v.line.find(c.line) != std::string::npos);
  }
}
