// Each variable Paddle 2.6's launchers set for a process in a multi-node job, pinned against our
// plan. Taken from Paddle 2.6.2's source:
//   collective --ips     python/paddle/distributed/launch/controllers/collective.py,
//                        CollectiveController._build_pod_with_args
//   collective --master  the same file, _build_pod_with_master
//   PS lists             python/paddle/distributed/fleet/launch_utils.py,
//                        ParameterServerLauncher.start_pod_server / start_pod_worker
// (python -m paddle.distributed.fleet.launch --servers --workers: the launcher whose flags we keep).
// Where we differ on purpose, `differs` says why; docs/launcher.md's "The launch contract, audited" has the
// same list.

#include <doctest/doctest.h>

#include <map>

#include "common/error.h"
#include "launcher/cluster/cluster_peers.h"
#include "launcher/plan/ps_plan.h"
#include "tests/unit/launcher/test_support.h"

namespace paddle::launcher {
namespace {

using testing::env_value;
using testing::cpu_host;
using testing::parse;

// Node `rank` of two, as the rendezvous ranks them: 2 trainers each, node 0's TCPStore port 40000.
std::vector<RankedNode> two_nodes(const std::vector<std::string>& endpoints_a, const std::vector<std::string>& endpoints_b) {
  std::vector<RankedNode> nodes(2);
  nodes[0].node.ip = "10.0.0.1";
  nodes[0].node.endpoints = endpoints_a;
  nodes[0].node.tcp_store = "10.0.0.1:40000";
  nodes[1].node_rank = 1;
  nodes[1].first_global_rank = 2;
  nodes[1].node.ip = "10.0.0.2";
  nodes[1].node.endpoints = endpoints_b;
  nodes[1].node.tcp_store = "10.0.0.2:40100";
  return nodes;
}

void check_pinned(const ProcessSpec& p, const std::map<std::string, std::string>& paddle) {
  for (const auto& [name, value] : paddle) {
    INFO(name);
    CHECK(env_value(p, name) == value);
  }
}

TEST_CASE("collective --ips: every variable of Paddle's _build_pod_with_args, and PADDLE_MASTER on node 0") {
  // paddle-launch --ips=10.0.0.1,10.0.0.2 --nproc_per_node=2 on 10.0.0.2: the plan, then the
  // rendezvous through the first IP keeps its endpoints and adds the job's variables.
  testing::CountingPorts ports;
  const LaunchOptions o = parse({"--ips=10.0.0.1,10.0.0.2", "--nproc_per_node=2", "t"});
  const LaunchPlan planned = make_launch_plan(o, {"t"}, cpu_host("10.0.0.2"), ports);
  const auto nodes = two_nodes({"10.0.0.1:6070", "10.0.0.1:6071"}, {"10.0.0.2:6070", "10.0.0.2:6071"});
  const LaunchPlan plan = make_cluster_plan(o, {"t"}, cpu_host("10.0.0.2"), nodes, 1, cluster_job_env(nodes, "default"));
  REQUIRE(plan.processes.size() == 2);
  CHECK(plan.trainer_endpoints == planned.trainer_endpoints);
  const std::string endpoints = "10.0.0.1:6070,10.0.0.1:6071,10.0.0.2:6070,10.0.0.2:6071";
  for (int i = 0; i < 2; ++i) {
    const std::string rank = std::to_string(2 + i), local = std::to_string(i);
    check_pinned(plan.processes[i], {{"PADDLE_GLOBAL_SIZE", "4"},
                                     {"PADDLE_LOCAL_SIZE", "2"},
                                     {"PADDLE_GLOBAL_RANK", rank},
                                     {"PADDLE_LOCAL_RANK", local},
                                     {"PADDLE_NNODES", "2"},
                                     {"PADDLE_CURRENT_ENDPOINT", "10.0.0.2:607" + local},
                                     {"PADDLE_TRAINER_ID", rank},
                                     {"PADDLE_TRAINERS_NUM", "4"},
                                     {"PADDLE_RANK_IN_NODE", local},
                                     {"PADDLE_TRAINER_ENDPOINTS", endpoints},
                                     {"PADDLE_DISTRI_BACKEND", "gloo"}});
    // Differs: Paddle's --ips mode sets no PADDLE_MASTER, so rank 0's TCPStore binds trainer
    // 0's port. We give node 0's kept port, as its --master mode does: one rule in every mode.
    CHECK(env_value(plan.processes[i], "PADDLE_MASTER") == "10.0.0.1:40000");
    check_pinned(planned.processes[i], {{"PADDLE_GLOBAL_RANK", rank}, {"PADDLE_TRAINER_ENDPOINTS", endpoints}});
  }
}

TEST_CASE("collective --master: every variable of Paddle's _build_pod_with_master") {
  const LaunchOptions o = parse({"--master=10.0.0.1:8090", "--nnodes=2", "--nproc_per_node=2", "t"});
  const auto nodes = two_nodes({"10.0.0.1:31000", "10.0.0.1:31001"}, {"10.0.0.2:32000", "10.0.0.2:32001"});
  for (int node = 0; node < 2; ++node) {
    const LaunchPlan plan = make_cluster_plan(o, {"t"}, cpu_host(nodes[node].node.ip), nodes, node,
                                              cluster_job_env(nodes, "job7"));
    REQUIRE(plan.processes.size() == 2);
    for (int i = 0; i < 2; ++i) {
      const std::string rank = std::to_string(2 * node + i), local = std::to_string(i);
      check_pinned(plan.processes[i], {{"PADDLE_MASTER", "10.0.0.1:40000"},  // pod 0's candidate, not 8090
                                       {"PADDLE_GLOBAL_SIZE", "4"},
                                       {"PADDLE_LOCAL_SIZE", "2"},
                                       {"PADDLE_GLOBAL_RANK", rank},
                                       {"PADDLE_LOCAL_RANK", local},
                                       {"PADDLE_NNODES", "2"},
                                       {"PADDLE_CURRENT_ENDPOINT", nodes[node].node.endpoints[i]},
                                       {"PADDLE_TRAINER_ID", rank},
                                       {"PADDLE_TRAINERS_NUM", "4"},
                                       {"PADDLE_RANK_IN_NODE", local},
                                       {"PADDLE_TRAINER_ENDPOINTS",
                                        "10.0.0.1:31000,10.0.0.1:31001,10.0.0.2:32000,10.0.0.2:32001"},
                                       {"PADDLE_DISTRI_BACKEND", "gloo"}});
      CHECK(env_value(plan.processes[i], "PADDLE_JOB_ID") == "job7");
    }
  }
}

// Paddle 3.3.1 (launch/controllers/collective.py _build_pod_with_master, controller.py
// add_container, utils/process_context.py): 2.6.2's set, plus what each process gets on top.
TEST_CASE("collective --master: every variable Paddle 3.3.1 adds to 2.6.2's") {
  const LaunchOptions o = parse({"--master=10.0.0.1:8090", "--nnodes=2", "--nproc_per_node=2", "--log_dir=/jobs/7/log", "t"});
  const auto nodes = two_nodes({"10.0.0.1:31000", "10.0.0.1:31001"}, {"10.0.0.2:32000", "10.0.0.2:32001"});
  HostFacts host = cpu_host("10.0.0.2");
  host.pod_name = "qwerty";
  const LaunchPlan plan = make_cluster_plan(o, {"t"}, host, nodes, 1, cluster_job_env(nodes, "job7"));
  REQUIRE(plan.processes.size() == 2);
  for (int i = 0; i < 2; ++i) {
    const std::string rank = std::to_string(2 + i);
    check_pinned(plan.processes[i], {{"PADDLE_LOG_DIR", "/jobs/7/log"},   // os.path.abspath(--log_dir)
                                     {"POD_NAME", "qwerty"},              // one per pod
                                     {"PADDLE_AUTO_CLUSTER", "0"},        // str(args.auto_cluster_config)
                                     {"PADDLE_BACKUP_ENV_PATH", "/jobs/7/log/backup_env." + rank + ".json"},
                                     {"PADDLE_TRAINER_ENDPOINTS",          // under PADDLE_ENV_LIMIT_LEN: kept
                                      "10.0.0.1:31000,10.0.0.1:31001,10.0.0.2:32000,10.0.0.2:32001"}});
    CHECK(plan.processes[i].backup_env_file == "/jobs/7/log/backup_env." + rank + ".json");
  }
  // Differs: `--auto_cluster_config` gives 1, where Paddle writes True, which its own engine's
  // int(os.getenv("PADDLE_AUTO_CLUSTER")) cannot read.
  const LaunchOptions cluster = parse({"--master=10.0.0.1:8090", "--nnodes=2", "--nproc_per_node=2",
                                       "--auto_cluster_config=True", "t"});
  CHECK(env_value(make_cluster_plan(cluster, {"t"}, host, nodes, 1, cluster_job_env(nodes, "job7")).processes[0],
                  "PADDLE_AUTO_CLUSTER") == "1");
}

TEST_CASE("PS lists: every variable of Paddle's fleet launcher for servers and workers") {
  // paddle-launch --servers=10.0.0.1:6170,10.0.0.2:6170 --workers=10.0.0.1,10.0.0.2 on 10.0.0.2.
  testing::CountingPorts ports;
  const LaunchOptions o = parse({"--servers=10.0.0.1:6170,10.0.0.2:6170", "--workers=10.0.0.1,10.0.0.2", "t"});
  LaunchPlan plan = make_launch_plan(o, {"t"}, cpu_host("10.0.0.2"), ports);
  CHECK(ports.taken() == 0);  // every port is the same on every node
  REQUIRE(plan.processes.size() == 2);
  const std::map<std::string, std::string> job{{"PADDLE_PSERVERS_IP_PORT_LIST", "10.0.0.1:6170,10.0.0.2:6170"},
                                               {"PADDLE_TRAINER_ENDPOINTS", "10.0.0.1:6172,10.0.0.2:6173"},
                                               {"PADDLE_TRAINERS_NUM", "2"},
                                               {"POD_IP", "10.0.0.2"},
                                               {"PADDLE_WITH_GLOO", "0"},
                                               {"PADDLE_GLOO_RENDEZVOUS", "3"},
                                               // FLAGS_START_PORT's rule (start + servers + workers),
                                               // with 6170 when unset: Paddle would take a free port
                                               // on each node, and the nodes would disagree.
                                               {"PADDLE_GLOO_HTTP_ENDPOINT", "10.0.0.1:6174"}};
  const ProcessSpec& server = plan.processes[0];
  CHECK(server.role == Role::kServer);
  check_pinned(server, job);
  check_pinned(server, {{"PADDLE_PORT", "6170"}, {"TRAINING_ROLE", "PSERVER"}});
  const ProcessSpec& worker = plan.processes[1];
  CHECK(worker.role == Role::kWorker);
  check_pinned(worker, job);
  check_pinned(worker, {{"PADDLE_PORT", "6173"}, {"TRAINING_ROLE", "TRAINER"}, {"PADDLE_TRAINER_ID", "1"}});
  // Differs: no PADDLE_GLOO_FS_PATH (the rendezvous is HTTP, PADDLE_GLOO_RENDEZVOUS=3, so the
  // directory is never read), no empty PADDLE_COORDINATOR_ENDPOINTS (no coordinators), and no
  // CUDA_VISIBLE_DEVICES=0, XPU_VISIBLE_DEVICES=0, FLAGS_selected_gpus=0 or FLAGS_selected_xpus=0
  // for a CPU worker (Paddle sets them even without a GPU; on a GPU machine that would pin every
  // CPU worker to GPU 0, and our runtime takes FLAGS_selected_gpus as "train on this GPU").
  for (const char* name : {"PADDLE_GLOO_FS_PATH", "PADDLE_COORDINATOR_ENDPOINTS", "CUDA_VISIBLE_DEVICES",
                           "XPU_VISIBLE_DEVICES", "FLAGS_selected_gpus", "FLAGS_selected_xpus"}) {
    INFO(name);
    CHECK_FALSE(testing::has_env(worker, name));
  }
}

TEST_CASE("PS lists across nodes meet at a master on node 0, below its first server's port") {
  testing::CountingPorts ports;
  const LaunchOptions o = parse({"--servers=10.0.0.1:6170,10.0.0.2:6170", "--workers=10.0.0.1,10.0.0.2", "t"});
  for (const char* ip : {"10.0.0.1", "10.0.0.2"}) {
    const LaunchPlan plan = make_launch_plan(o, {"t"}, cpu_host(ip), ports);
    const ClusterSettings s = ps_lists_cluster_settings(o, plan);
    CHECK(s.master_ip == "10.0.0.1");
    CHECK(s.master_port == 6169);
    CHECK(s.nnodes == 2);
    CHECK(s.host_master == (std::string(ip) == "10.0.0.1"));
    CHECK(s.ips_order == std::vector<std::string>{"10.0.0.1", "10.0.0.2"});
  }
  // A port listed on node 0 is skipped: the master takes the next one down.
  const LaunchOptions crowded = parse({"--servers=10.0.0.1:6170", "--workers=10.0.0.1:6169,10.0.0.2", "t"});
  const LaunchPlan plan = make_launch_plan(crowded, {"t"}, cpu_host("10.0.0.2"), ports);
  CHECK(ps_lists_cluster_settings(crowded, plan).master_port == 6168);
}

TEST_CASE("PS lists across nodes: the Gloo store's fixed port steps past a listed endpoint, and --http_port may not be one") {
  testing::CountingPorts ports;
  const LaunchPlan plan = make_launch_plan(parse({"--servers=10.0.0.1:6173", "--workers=10.0.0.2,10.0.0.2", "t"}), {"t"},
                                           cpu_host("10.0.0.2"), ports);
  CHECK(plan.ps_store_endpoint == "10.0.0.1:6174");  // 6170 + 1 + 2 is the server's own port
  CHECK_THROWS_WITH_AS(make_launch_plan(parse({"--servers=10.0.0.1:6173", "--workers=10.0.0.2", "--http_port=6173", "t"}),
                                        {"t"}, cpu_host("10.0.0.2"), ports),
                       doctest::Contains("--http_port=6173: 10.0.0.1:6173 is also"), common::UsageError);
}

TEST_CASE("nodes given different lists are refused, naming both") {
  std::vector<NodeRegistration> nodes(2);
  nodes[0].ip = "10.0.0.1";
  nodes[0].hostname = "a";
  nodes[0].job_lists = "--ips=10.0.0.1,10.0.0.2";
  nodes[1].ip = "10.0.0.2";
  nodes[1].hostname = "b";
  nodes[1].job_lists = "--ips=10.0.0.2,10.0.0.1";
  CHECK_THROWS_WITH_AS(rank_nodes(nodes, {"10.0.0.1", "10.0.0.2"}),
                       doctest::Contains("node 10.0.0.1 (a) has --ips=10.0.0.1,10.0.0.2, node 10.0.0.2 (b) has "
                                         "--ips=10.0.0.2,10.0.0.1"),
                       common::UsageError);
  nodes[1].job_lists = nodes[0].job_lists;
  CHECK(rank_nodes(nodes, {"10.0.0.1", "10.0.0.2"}).size() == 2);
}

TEST_CASE("the job's PADDLE_MASTER is node 0's registered port, and a node 0 without one is named") {
  auto nodes = two_nodes({"10.0.0.1:1"}, {"10.0.0.2:1"});
  const EnvList env = cluster_job_env(nodes, "j");
  CHECK(env == EnvList{{"PADDLE_MASTER", "10.0.0.1:40000"}, {"PADDLE_NNODES", "2"}, {"PADDLE_JOB_ID", "j"}});
  nodes[0].node.tcp_store.clear();
  CHECK_THROWS_WITH_AS(cluster_job_env(nodes, "j"), doctest::Contains("node 0 (10.0.0.1) registered no port"),
                       common::PeerError);
}

TEST_CASE("a registration carries its TCPStore port through the master") {
  NodeRegistration n;
  n.ip = "10.0.0.1";
  n.hostname = "a";
  n.tcp_store = "10.0.0.1:40000";
  CHECK(NodeRegistration::from_json(n.to_json().dump()).tcp_store == "10.0.0.1:40000");
}

TEST_CASE("PS: a node of a --master job may hold one role; a one-node job needs both") {
  std::vector<RankedNode> nodes(2);
  nodes[0].node.ip = "10.0.0.1";
  nodes[0].node.server_endpoints = {"10.0.0.1:7000"};
  nodes[0].node.ps_store_port = 7100;
  nodes[1].node_rank = 1;
  nodes[1].node.ip = "10.0.0.2";
  nodes[1].node.endpoints = {"10.0.0.2:7001", "10.0.0.2:7002"};
  const LaunchOptions servers_only = parse({"--master=10.0.0.1:8090", "--nnodes=2", "--worker_num=0", "t"});
  const LaunchPlan a = make_cluster_ps_plan(servers_only, {"t"}, cpu_host("10.0.0.1"), nodes, 0, {});
  REQUIRE(a.processes.size() == 1);
  CHECK(a.processes[0].role == Role::kServer);
  const LaunchOptions workers_only = parse({"--master=10.0.0.1:8090", "--nnodes=2", "--server_num=0", "--worker_num=2", "t"});
  const LaunchPlan b = make_cluster_ps_plan(workers_only, {"t"}, cpu_host("10.0.0.2"), nodes, 1, {});
  REQUIRE(b.processes.size() == 2);
  CHECK(env_value(b.processes[1], "PADDLE_PSERVERS_IP_PORT_LIST") == "10.0.0.1:7000");
  CHECK(env_value(b.processes[1], "PADDLE_GLOO_HTTP_ENDPOINT") == "10.0.0.1:7100");
  // Node 0 with workers alone: the store is on the servers' node, at the port that node kept.
  std::swap(nodes[0].node, nodes[1].node);
  nodes[0].node.ps_store_port = 7200;
  const LaunchPlan c = make_cluster_ps_plan(workers_only, {"t"}, cpu_host("10.0.0.2"), nodes, 0, {});
  CHECK(env_value(c.processes[0], "PADDLE_GLOO_HTTP_ENDPOINT") == "10.0.0.1:7100");
  testing::CountingPorts ports;
  CHECK_THROWS_WITH_AS(make_launch_plan(parse({"--server_num=1", "--worker_num=0", "t"}), {"t"}, cpu_host("10.0.0.1"), ports),
                       doctest::Contains("--worker_num=0"), common::UsageError);
}

}  // namespace
}  // namespace paddle::launcher
