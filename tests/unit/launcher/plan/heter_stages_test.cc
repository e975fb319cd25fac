// ps-heter jobs (heter_stages.h through make_launch_plan): each variable Paddle 2.6's fleet launcher
// sets, pinned from Paddle 2.6.2's python/paddle/distributed/fleet/launch_utils.py:
//   ports and stages   ParameterServerLauncher.get_role_endpoints (get_ports(num, offset) from
//                      FLAGS_START_PORT: servers, workers, each heter stage, the Gloo store)
//   servers            ParameterServerLauncher.start_pod_server (the PS_HETER branch)
//   workers            ParameterServerLauncher.start_pod_worker (the PS_HETER branch)
//   heter workers      ParameterServerLauncher.start_pod_heter_worker
// Where we differ on purpose, as for plain PS jobs (cluster/paddle_contract_test.cc): no
// PADDLE_GLOO_FS_PATH, no empty PADDLE_COORDINATOR_ENDPOINTS, and no CUDA_VISIBLE_DEVICES=0,
// XPU_VISIBLE_DEVICES=0, FLAGS_selected_gpus=0 or FLAGS_selected_xpus=0 without a GPU.

#include <doctest/doctest.h>

#include <map>

#include "common/error.h"
#include "launcher/plan/ps_plan.h"
#include "tests/unit/launcher/test_support.h"

using namespace paddle::launcher;
using namespace paddle::launcher::testing;

namespace {

void check_pinned(const ProcessSpec& p, const std::map<std::string, std::string>& paddle) {
  for (const auto& [name, value] : paddle) {
    INFO(name);
    CHECK(env_value(p, name) == value);
  }
}

void check_not_set(const ProcessSpec& p) {
  for (const char* name : {"PADDLE_GLOO_FS_PATH", "PADDLE_COORDINATOR_ENDPOINTS", "CUDA_VISIBLE_DEVICES",
                           "XPU_VISIBLE_DEVICES", "FLAGS_selected_gpus", "FLAGS_selected_xpus"}) {
    INFO(name);
    CHECK_FALSE(has_env(p, name));
  }
}


}  // namespace

TEST_CASE("ps-heter, one stage: every variable of Paddle's fleet launcher, for every role") {
  // FLAGS_START_PORT=6170 python -m paddle.distributed.fleet.launch --server_num=1 --worker_num=2
  //   --heter_worker_num=2 --heter_devices=gpu
  HostFacts host = cpu_host();
  host.env["FLAGS_START_PORT"] = "6170";
  const LaunchPlan plan = plan_for({"--server_num=1", "--worker_num=2", "--heter_worker_num=2", "--heter_devices=gpu", "t"}, host);
  CHECK(plan.mode == LaunchPlan::Mode::kPs);
  CHECK(plan.heter_endpoints == std::vector<std::string>{"127.0.0.1:6173", "127.0.0.1:6174"});
  CHECK(plan.fixed_local_ports == std::vector<int>{6170, 6171, 6172, 6173, 6174});
  REQUIRE(plan.processes.size() == 5);
  const std::map<std::string, std::string> job{{"PADDLE_PSERVERS_IP_PORT_LIST", "127.0.0.1:6170"},
                                               {"PADDLE_TRAINER_ENDPOINTS", "127.0.0.1:6171,127.0.0.1:6172"},
                                               {"PADDLE_ALL_HETER_TRAINER_IP_PORT_LIST", "127.0.0.1:6173,127.0.0.1:6174"},
                                               {"PADDLE_TRAINERS_NUM", "2"},
                                               {"POD_IP", "127.0.0.1"},
                                               {"PADDLE_WITH_GLOO", "0"},
                                               {"PADDLE_GLOO_RENDEZVOUS", "3"},
                                               {"PADDLE_GLOO_HTTP_ENDPOINT", "127.0.0.1:6175"}};
  const ProcessSpec& server = plan.processes[0];
  CHECK(server.role == Role::kServer);
  check_pinned(server, job);
  check_pinned(server, {{"PADDLE_PORT", "6170"}, {"TRAINING_ROLE", "PSERVER"}});
  for (const char* name : {"STAGE_ID", "STAGE_NUM", "HETER_DEVICE_TYPE", "PADDLE_NEXT_HETER_TRAINER_IP_PORT_LIST"}) {
    INFO(name);
    CHECK_FALSE(has_env(server, name));
  }
  check_not_set(server);
  for (int i = 0; i < 2; ++i) {
    const ProcessSpec& worker = plan.processes[static_cast<size_t>(1 + i)];
    CHECK(worker.role == Role::kWorker);
    check_pinned(worker, job);
    check_pinned(worker, {{"PADDLE_PORT", std::to_string(6171 + i)},
                          {"TRAINING_ROLE", "TRAINER"},
                          {"PADDLE_TRAINER_ID", std::to_string(i)},
                          {"PADDLE_STAGE_TRAINERS_NUM", "[2, 2]"},
                          {"STAGE_ID", "1"},
                          {"STAGE_NUM", "2"},
                          {"PADDLE_PREVIOUS_HETER_TRAINER_IP_PORT_LIST", ""},
                          {"PADDLE_NEXT_HETER_TRAINER_IP_PORT_LIST", "127.0.0.1:6173,127.0.0.1:6174"},
                          {"HETER_DEVICE_TYPE", "cpu"}});
    check_not_set(worker);
  }
  for (int j = 0; j < 2; ++j) {
    const ProcessSpec& heter = plan.processes[static_cast<size_t>(3 + j)];
    CHECK(heter.role == Role::kHeterWorker);
    CHECK(heter.rank == j);
    CHECK(heter.local_index == j);
    CHECK(heter.endpoint == "127.0.0.1:" + std::to_string(6173 + j));
    CHECK(heter.log_file == "log/heterlog." + std::to_string(j));
    CHECK(heter.error_file == "log/error.heter_worker." + std::to_string(j) + ".json");
    check_pinned(heter, job);
    check_pinned(heter, {{"PADDLE_PORT", std::to_string(6173 + j)},
                         {"TRAINING_ROLE", "HETER_TRAINER"},
                         {"PADDLE_STAGE_TRAINERS_NUM", "[2, 2]"},
                         {"STAGE_ID", "2"},
                         {"STAGE_NUM", "2"},
                         {"PADDLE_PREVIOUS_HETER_TRAINER_IP_PORT_LIST", "127.0.0.1:6171,127.0.0.1:6172"},
                         {"PADDLE_NEXT_HETER_TRAINER_IP_PORT_LIST", ""},
                         {"HETER_DEVICE_TYPE", "gpu"}});
    // Paddle gives a heter worker no trainer id: its role maker numbers it by its place in
    // PADDLE_ALL_HETER_TRAINER_IP_PORT_LIST. It is no rank of the workers' world either.
    for (const char* name : {"PADDLE_TRAINER_ID", "RANK", "WORLD_SIZE"}) {
      INFO(name);
      CHECK_FALSE(has_env(heter, name));
    }
    check_not_set(heter);
  }
  // Paddle's order, which the "Distributed Envs" table shows.
  const ProcessSpec& heter = plan.processes[3];
  REQUIRE(heter.env.size() >= 13);
  CHECK(heter.env[2].first == "PADDLE_NEXT_HETER_TRAINER_IP_PORT_LIST");
  CHECK(heter.env[9].first == "TRAINING_ROLE");
  CHECK(heter.env[12].first == "POD_IP");
}

TEST_CASE("ps-heter, two stages: each stage's neighbours, devices and ports") {
  // FLAGS_START_PORT=6170 ... --server_num=1 --worker_num=1 --heter_worker_num="1;2" --heter_devices="cpu;gpu"
  const LaunchPlan plan = plan_for({"--server_num=1", "--worker_num=1", "--heter_worker_num=1;2",
                                    "--heter_devices=cpu;gpu", "--start_port=6170", "t"});
  REQUIRE(plan.processes.size() == 5);
  const std::string all = "127.0.0.1:6172,127.0.0.1:6173,127.0.0.1:6174";
  CHECK(plan.ps_store_endpoint == "127.0.0.1:6175");
  check_pinned(plan.processes[0], {{"PADDLE_ALL_HETER_TRAINER_IP_PORT_LIST", all}});
  check_pinned(plan.processes[1], {{"STAGE_ID", "1"},
                                   {"STAGE_NUM", "3"},
                                   {"PADDLE_STAGE_TRAINERS_NUM", "[1, 1, 2]"},
                                   {"PADDLE_PREVIOUS_HETER_TRAINER_IP_PORT_LIST", ""},
                                   {"PADDLE_NEXT_HETER_TRAINER_IP_PORT_LIST", "127.0.0.1:6172"},
                                   {"PADDLE_ALL_HETER_TRAINER_IP_PORT_LIST", all},
                                   {"HETER_DEVICE_TYPE", "cpu"}});
  check_pinned(plan.processes[2], {{"PADDLE_PORT", "6172"},
                                   {"STAGE_ID", "2"},
                                   {"STAGE_NUM", "3"},
                                   {"PADDLE_PREVIOUS_HETER_TRAINER_IP_PORT_LIST", "127.0.0.1:6171"},
                                   {"PADDLE_NEXT_HETER_TRAINER_IP_PORT_LIST", "127.0.0.1:6173,127.0.0.1:6174"},
                                   {"HETER_DEVICE_TYPE", "cpu"}});
  for (size_t i : {3u, 4u})
    check_pinned(plan.processes[i], {{"PADDLE_PORT", std::to_string(6170 + i)},
                                     {"STAGE_ID", "3"},
                                     {"PADDLE_PREVIOUS_HETER_TRAINER_IP_PORT_LIST", "127.0.0.1:6172"},
                                     {"PADDLE_NEXT_HETER_TRAINER_IP_PORT_LIST", ""},
                                     {"HETER_DEVICE_TYPE", "gpu"}});
  CHECK(plan.processes[4].log_file == "log/heterlog.2");
}

TEST_CASE("ps-heter on one node without a start port: free ports, the Gloo store after the heter workers") {
  CountingPorts ports;
  const LaunchPlan plan = make_launch_plan(parse({"--server_num=1", "--worker_num=2", "--heter_worker_num=2",
                                                  "--heter_devices=cpu", "t"}),
                                           {"t"}, cpu_host(), ports);
  CHECK(ports.taken() == 6);
  CHECK(plan.heter_endpoints == std::vector<std::string>{"127.0.0.1:30003", "127.0.0.1:30004"});
  CHECK(plan.ps_store_endpoint == "127.0.0.1:30005");
  CHECK(plan.fixed_local_ports.empty());
  CHECK(plan.echoed_process().role == Role::kWorker);
}

TEST_CASE("ps-heter with GPUs: each heter worker one GPU, round robin, as the workers") {
  const LaunchPlan plan = plan_for({"--server_num=1", "--worker_num=1", "--heter_worker_num=3", "--heter_devices=gpu",
                                    "--gpus=4,5", "t"});
  REQUIRE(plan.processes.size() == 5);
  CHECK(env_value(plan.processes[2], "CUDA_VISIBLE_DEVICES") == "4");
  CHECK(env_value(plan.processes[3], "CUDA_VISIBLE_DEVICES") == "5");
  CHECK(env_value(plan.processes[4], "CUDA_VISIBLE_DEVICES") == "4");
  CHECK(env_value(plan.processes[4], "FLAGS_selected_gpus") == "0");
}

TEST_CASE("ps-heter lists across nodes: this node's heter workers, ranked by the whole list, default ports") {
  // Example 8 of Paddle's launch.py: a server, a worker and a heter worker on each of two nodes.
  HostFacts host = cpu_host("10.0.0.2");
  host.env["POD_IP"] = "10.0.0.2";
  const LaunchPlan plan = plan_for({"--servers=10.0.0.1:6170,10.0.0.2:6170", "--workers=10.0.0.1:6171,10.0.0.2:6171",
                                    "--heter_workers=10.0.0.1,10.0.0.2", "--heter_devices=gpu", "t"},
                                   host);
  CHECK(plan.node_count == 2);
  CHECK(plan.node_rank == 1);
  // Entries without a port take start + servers + workers + their index, 6170 without a start port.
  CHECK(plan.heter_endpoints == std::vector<std::string>{"10.0.0.1:6174", "10.0.0.2:6175"});
  REQUIRE(plan.processes.size() == 3);
  const ProcessSpec& heter = plan.processes[2];
  CHECK(heter.role == Role::kHeterWorker);
  CHECK(heter.rank == 1);
  CHECK(heter.local_index == 0);
  CHECK(heter.log_file == "log/heterlog.0");
  check_pinned(heter, {{"POD_IP", "10.0.0.2"},
                       {"PADDLE_PORT", "6175"},
                       {"PADDLE_PREVIOUS_HETER_TRAINER_IP_PORT_LIST", "10.0.0.1:6171,10.0.0.2:6171"},
                       {"PADDLE_ALL_HETER_TRAINER_IP_PORT_LIST", "10.0.0.1:6174,10.0.0.2:6175"},
                       {"PADDLE_STAGE_TRAINERS_NUM", "[2, 2]"}});
  CHECK(plan.ps_store_endpoint == "10.0.0.1:6176");  // start + servers + workers + heter workers
  CHECK(plan.fixed_local_ports == std::vector<int>{6170, 6171, 6175});
}

TEST_CASE("ps-heter: --heter_workers with --heter_worker_num, a node with heter workers alone") {
  HostFacts host = cpu_host("10.0.0.3");
  host.env["POD_IP"] = "10.0.0.3";
  const LaunchPlan plan = plan_for({"--servers=10.0.0.1:6170", "--workers=10.0.0.1:6171", "--heter_worker_num=2",
                                    "--heter_workers=10.0.0.3:7000,10.0.0.3:7001", "--heter_devices=xpu", "t"},
                                   host);
  CHECK(plan.node_ips == std::vector<std::string>{"10.0.0.1", "10.0.0.3"});
  REQUIRE(plan.processes.size() == 2);
  CHECK(plan.processes[1].role == Role::kHeterWorker);
  CHECK(env_value(plan.processes[1], "HETER_DEVICE_TYPE") == "xpu");
  CHECK(plan.echoed_process().role == Role::kHeterWorker);
}

TEST_CASE("--run_mode=ps-heter selects the mode, and heter flags select it without --run_mode") {
  const LaunchPlan plan = plan_for({"--run_mode=ps-heter", "--heter_worker_num=1", "--heter_devices=cpu", "t"});
  REQUIRE(plan.processes.size() == 3);  // one server and one worker by default, as --run_mode=ps
  CHECK(plan.processes[2].role == Role::kHeterWorker);
  CHECK(plan_for({"--heter_workers=127.0.0.1:7000", "--heter_devices=cpu", "t"}).heter_endpoints ==
        std::vector<std::string>{"127.0.0.1:7000"});
  CHECK(plan_for({"--server_num=1", "--worker_num=1", "t"}).heter_endpoints.empty());
}

TEST_CASE("ps-heter input errors name the flag") {
  const auto error_of = [](std::vector<std::string> args) {
    args.push_back("t");
    return plan_error(std::move(args));
  };
  CHECK(error_of({"--heter_worker_num=2"}).find("--heter_worker_num: a ps-heter job needs --heter_devices") !=
        std::string::npos);
  CHECK(error_of({"--heter_worker_num=2", "--heter_devices=tpu"}).find("--heter_devices=tpu: 'tpu' is not a device type") !=
        std::string::npos);
  CHECK(error_of({"--heter_worker_num=2", "--heter_devices=cpu;gpu"})
            .find("--heter_devices=cpu;gpu gives 2 stage(s), but --heter_worker_num gives 1") != std::string::npos);
  CHECK(error_of({"--heter_worker_num=two", "--heter_devices=cpu"}).find("--heter_worker_num=two: stage 2: 'two' is not") !=
        std::string::npos);
  CHECK(error_of({"--heter_worker_num=0", "--heter_devices=cpu"}).find("--heter_worker_num=0: stage 2: 0 is outside 1..") !=
        std::string::npos);
  CHECK(error_of({"--heter_worker_num=1;", "--heter_devices=cpu"}).find("--heter_worker_num=1;: stage 3 is empty") !=
        std::string::npos);
  CHECK(error_of({"--run_mode=ps-heter"}).find("--run_mode=ps-heter: a ps-heter job needs its heter workers") !=
        std::string::npos);
  CHECK(error_of({"--heter_devices=cpu"}).find("--heter_devices: a ps-heter job needs its heter workers") !=
        std::string::npos);
  CHECK(error_of({"--run_mode=ps", "--heter_worker_num=1", "--heter_devices=cpu"})
            .find("--run_mode=ps conflicts with --heter_worker_num") != std::string::npos);
  CHECK(error_of({"--run_mode=collective", "--heter_worker_num=1", "--heter_devices=cpu"})
            .find("--run_mode=collective conflicts with --heter_worker_num") != std::string::npos);
  CHECK(error_of({"--heter_worker_num=2", "--heter_workers=127.0.0.1:7000", "--heter_devices=cpu"})
            .find("stage 2 has 2 heter worker(s) in one and 1 in the other") != std::string::npos);
  CHECK(error_of({"--heter_worker_num=1;1", "--heter_workers=127.0.0.1:7000", "--heter_devices=cpu;cpu"})
            .find("--heter_worker_num=1;1 gives 2 stage(s), but --heter_workers gives 1") != std::string::npos);
  CHECK(error_of({"--servers=127.0.0.1:7000", "--workers=127.0.0.1:7001", "--heter_workers=127.0.0.1:7000",
                  "--heter_devices=cpu"})
            .find("--heter_workers: endpoint 127.0.0.1:7000 is also a server's or a worker's") != std::string::npos);
  CHECK(error_of({"--heter_workers=127.0.0.1:7000;127.0.0.1:7000", "--heter_devices=cpu;cpu"})
            .find("--heter_workers: endpoint 127.0.0.1:7000 is listed twice") != std::string::npos);
  CHECK(error_of({"--heter_workers=localhost:7000", "--heter_devices=cpu"}).find("--heter_workers: 'localhost' is not") !=
        std::string::npos);
  CHECK(error_of({"--servers=192.0.2.7:7000,192.0.2.8:7000", "--workers=192.0.2.7:7001", "--heter_worker_num=1",
                  "--heter_devices=cpu"})
            .find("--heter_worker_num=1 runs heter workers on 127.0.0.1, but this job spans the nodes") !=
        std::string::npos);
}

TEST_CASE("a --master PS job refuses heter workers") {
  CountingPorts ports;
  CHECK_THROWS_WITH_AS(register_ps_node(parse({"--master=10.0.0.1:8090", "--nnodes=2", "--heter_worker_num=1", "t"}),
                                        cpu_host("10.0.0.1"), "10.0.0.1", "a", std::nullopt, ports),
                       doctest::Contains("--heter_worker_num: a --master PS job has no heter workers"),
                       paddle::common::UsageError);
  CHECK_THROWS_WITH_AS(register_ps_node(parse({"--master=10.0.0.1:8090", "--nnodes=2", "--run_mode=ps-heter", "t"}),
                                        cpu_host("10.0.0.1"), "10.0.0.1", "a", std::nullopt, ports),
                       doctest::Contains("--run_mode=ps-heter: a --master PS job has no heter workers"),
                       paddle::common::UsageError);
}

TEST_CASE("the configuration block lists the heter flags, as Paddle's does") {
  const auto rows = describe_options(parse({"--heter_worker_num=1;2", "--heter_devices=cpu;gpu", "t"}));
  const std::map<std::string, std::string> by_name(rows.begin(), rows.end());
  CHECK(by_name.at("heter_worker_num") == "1;2");
  CHECK(by_name.at("heter_devices") == "cpu;gpu");
  CHECK(by_name.at("heter_workers") == "None");
}
