#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <future>

#include "store/kv_store_server.h"
#include "launcher/cluster/cluster_link.h"
#include "launcher/console/launch_log.h"

using namespace paddle::launcher;
using namespace std::chrono_literals;

namespace {

// A one-node job whose launcher hosts the master on 127.0.0.1, as node 0 of a real job does.
ClusterSettings one_node_job() {
  ClusterSettings s;
  s.master_ip = "127.0.0.1";
  s.master_port = paddle::store::KvStoreServer("127.0.0.1", 0).port();  // a free port
  s.node_ip = "127.0.0.1";
  s.host_master = true;
  s.node_rank = 0;
  s.settle_time = 200ms;
  s.token = paddle::common::JobToken("cluster-link-test");
  return s;
}

NodeRegistration me() {
  NodeRegistration n;
  n.ip = "127.0.0.1";
  n.hostname = "node0";
  n.requested_rank = 0;
  n.endpoints = {"127.0.0.1:6170"};
  return n;
}

JobFailure failed(JobFailure::Cause cause, const std::string& what, int status) {
  JobFailure f;
  f.cause = cause;
  f.node_rank = 0;
  f.ip = "127.0.0.1";
  f.hostname = "node0";
  f.what = what;
  f.exit_status = status;
  return f;
}

}  // namespace

TEST_CASE("a SIGTERM handled while a launcher waits for the verdict reports without deadlocking the wait") {
  // scancel signals the launcher and its processes at once: a process fails, the launcher waits
  // for the verdict, and the wait's interruption check runs the signal handler, which reports.
  std::FILE* null = std::fopen("/dev/null", "w");
  LaunchLog log(null);
  ClusterLink link(one_node_job(), log);
  link.join(0, me());
  const JobFailure process = failed(JobFailure::Cause::kProcessFailed, "trainer 0 (local 0) exited with code 3", 3);
  link.report(0, process);
  int looks = 0;
  auto waited = std::async(std::launch::async, [&] {
    return link.verdict(0, process, [&] {
      if (++looks == 1) link.report(0, failed(JobFailure::Cause::kLauncherSignalled, "launcher signalled (SIGTERM)", 143));
      return looks > 1;
    });
  });
  REQUIRE(waited.wait_for(10s) == std::future_status::ready);  // a deadlock never gets here (ctest's timeout ends it)
  const JobFailure root = waited.get();
  CHECK(looks >= 1);
  CHECK(root.exit_status >= 3);  // the process's failure, or the signal, as the master settles it
  link.finish(0);
}
