#include <doctest/doctest.h>

#include "common/error.h"
#include "tests/unit/launcher/test_support.h"

using namespace paddle::launcher;
using namespace paddle::launcher::testing;

TEST_CASE("one node, CPU: free ports, gloo, ranks in order, full environment") {
  CountingPorts ports;
  LaunchPlan plan = make_launch_plan(parse({"--nproc_per_node=2", "train"}), {"/bin/train"}, cpu_host(), ports);
  CHECK(plan.mode == LaunchPlan::Mode::kCollective);
  CHECK(ports.taken() == 2);
  CHECK(plan.fixed_local_ports.empty());
  CHECK(plan.trainer_endpoints == std::vector<std::string>{"127.0.0.1:30000", "127.0.0.1:30001"});
  REQUIRE(plan.processes.size() == 2);
  const ProcessSpec& p1 = plan.processes[1];
  CHECK(p1.role == Role::kTrainer);
  CHECK(p1.log_file == "log/workerlog.1");
  CHECK(env_value(p1, "PADDLE_TRAINER_ID") == "1");
  CHECK(env_value(p1, "PADDLE_CURRENT_ENDPOINT") == "127.0.0.1:30001");
  CHECK(env_value(p1, "PADDLE_TRAINERS_NUM") == "2");
  CHECK(env_value(p1, "PADDLE_TRAINER_ENDPOINTS") == "127.0.0.1:30000,127.0.0.1:30001");
  CHECK(env_value(p1, "PADDLE_RANK_IN_NODE") == "1");
  CHECK(env_value(p1, "PADDLE_LOCAL_DEVICE_IDS") == "");
  CHECK(env_value(p1, "PADDLE_DISTRI_BACKEND") == "gloo");
  CHECK_FALSE(has_env(p1, "FLAGS_selected_gpus"));
  CHECK(env_value(p1, "RANK") == "1");
  CHECK(env_value(p1, "WORLD_SIZE") == "2");
  CHECK(env_value(p1, "LOCAL_RANK") == "1");
  CHECK(env_value(p1, "LOCAL_WORLD_SIZE") == "2");
  CHECK(env_value(p1, "MASTER_ADDR") == "127.0.0.1");
  CHECK(env_value(p1, "MASTER_PORT") == "30000");
  CHECK(env_value(p1, "OMP_NUM_THREADS") == "4");
  CHECK(env_value(p1, "PADDLE_TRAINER_ID") == "1");
}

TEST_CASE("OMP_NUM_THREADS is left alone when the user set it, and is at least 1") {
  HostFacts h = cpu_host("192.0.2.7", 2);
  CHECK(env_value(plan_for({"--nproc_per_node=4", "t"}, h).processes[0], "OMP_NUM_THREADS") == "1");
  h.env["OMP_NUM_THREADS"] = "3";
  CHECK_FALSE(has_env(plan_for({"--nproc_per_node=4", "t"}, h).processes[0], "OMP_NUM_THREADS"));
}

TEST_CASE("FLAGS_START_PORT or --start_port make one-node ports deterministic") {
  HostFacts h = cpu_host();
  h.env["FLAGS_START_PORT"] = "7100";
  LaunchPlan plan = plan_for({"--nproc_per_node=2", "t"}, h);
  CHECK(plan.trainer_endpoints == std::vector<std::string>{"127.0.0.1:7100", "127.0.0.1:7101"});
  CHECK(plan.fixed_local_ports == std::vector<int>{7100, 7101});
  CHECK(plan_for({"--start_port=7200", "--nproc_per_node=2", "t"}, h).trainer_endpoints[1] == "127.0.0.1:7201");
  h.env["FLAGS_START_PORT"] = "seventy";
  CHECK(plan_error({"t"}, h).find("FLAGS_START_PORT") != std::string::npos);
  CHECK(plan_error({"--start_port=65535", "--nproc_per_node=2", "t"}).find("--start_port") != std::string::npos);
}

TEST_CASE("GPUs: one process per id by default, contiguous groups with --nproc_per_node, nccl") {
  LaunchPlan plan = plan_for({"--gpus=0,1,2,3", "t"});
  REQUIRE(plan.processes.size() == 4);
  CHECK(env_value(plan.processes[2], "FLAGS_selected_gpus") == "2");
  CHECK(env_value(plan.processes[2], "PADDLE_DISTRI_BACKEND") == "nccl");
  CHECK(env_value(plan.processes[2], "PADDLE_WORLD_DEVICE_IDS") == "0:1:2:3");
  LaunchPlan grouped = plan_for({"--gpus=0,1,2,3", "--nproc_per_node=2", "t"});
  REQUIRE(grouped.processes.size() == 2);
  CHECK(env_value(grouped.processes[1], "FLAGS_selected_gpus") == "2,3");
  CHECK(env_value(grouped.processes[1], "PADDLE_LOCAL_DEVICE_IDS") == "2,3");
  CHECK(plan_error({"--gpus=0,1,2", "--nproc_per_node=2", "t"}).find("--nproc_per_node=2 does not divide") !=
        std::string::npos);
  CHECK(plan_error({"--gpus=0,0", "t"}).find("--gpus") != std::string::npos);
  CHECK(plan_error({"--gpus=0,a", "t"}).find("--gpus: 'a'") != std::string::npos);
}

TEST_CASE("GPU ids are relative to CUDA_VISIBLE_DEVICES; visible GPUs are the default") {
  HostFacts h = cpu_host();
  h.env["CUDA_VISIBLE_DEVICES"] = "4,5,6,7";
  LaunchPlan plan = plan_for({"--gpus=5,7", "t"}, h);
  CHECK(env_value(plan.processes[1], "FLAGS_selected_gpus") == "3");
  CHECK_FALSE(plan.notes.empty());
  HostFacts gpus = cpu_host();
  gpus.gpu_count = 2;
  CHECK(plan_for({"t"}, gpus).processes.size() == 2);
  CHECK(plan_error({"--backend=nccl", "t"}).find("--backend=nccl") != std::string::npos);
  CHECK(env_value(plan_for({"--backend=gloo", "t"}, gpus).processes[0], "PADDLE_DISTRI_BACKEND") == "gloo");
}

TEST_CASE("several nodes: the same endpoints on every node, disjoint ranks") {
  std::vector<std::string> base{"--ips=127.0.0.1,127.0.0.2", "--nproc_per_node=2"};
  auto with = [&](std::string host) {
    auto args = base;
    args.push_back("--host=" + host);
    args.push_back("t");
    return plan_for(args);
  };
  LaunchPlan a = with("127.0.0.1"), b = with("127.0.0.2");
  const std::vector<std::string> expected{"127.0.0.1:6070", "127.0.0.1:6071", "127.0.0.2:6070", "127.0.0.2:6071"};
  CHECK(a.trainer_endpoints == expected);
  CHECK(b.trainer_endpoints == expected);
  CHECK(env_value(a.processes[1], "PADDLE_TRAINER_ID") == "1");
  CHECK(env_value(b.processes[0], "PADDLE_TRAINER_ID") == "2");
  CHECK(env_value(b.processes[1], "PADDLE_TRAINER_ID") == "3");
  CHECK(env_value(b.processes[1], "PADDLE_CURRENT_ENDPOINT") == "127.0.0.2:6071");
  CHECK(env_value(b.processes[1], "PADDLE_TRAINERS_NUM") == "4");
  CHECK(env_value(b.processes[1], "MASTER_ADDR") == "127.0.0.1");
  CHECK(b.node_rank == 1);
  CHECK(b.fixed_local_ports == std::vector<int>{6070, 6071});
}

TEST_CASE("this node: --host, then POD_IP, then the interface addresses") {
  HostFacts h = cpu_host();
  CHECK(plan_for({"--ips=10.9.9.9,192.0.2.7", "t"}, h).node_ip == "192.0.2.7");
  h.env["POD_IP"] = "10.9.9.9";
  CHECK(plan_for({"--ips=10.9.9.9,192.0.2.7", "t"}, h).node_ip == "10.9.9.9");
  CHECK(plan_for({"--ips=10.9.9.9,192.0.2.7", "--host=192.0.2.7", "t"}, h).node_ip == "192.0.2.7");
  h.env["POD_IP"] = "10.1.1.1";
  CHECK(plan_error({"--ips=10.9.9.9,192.0.2.7", "t"}, h).find("POD_IP: 10.1.1.1 is not in --ips") !=
        std::string::npos);
}

TEST_CASE("node errors name the addresses found and how to fix it") {
  std::string none = plan_error({"--ips=10.9.9.8,10.9.9.9", "t"});
  CHECK(none.find("this node is not in --ips=10.9.9.8,10.9.9.9") != std::string::npos);
  CHECK(none.find("127.0.0.1, 192.0.2.7") != std::string::npos);
  CHECK(none.find("--host") != std::string::npos);
  CHECK(none.find("POD_IP") != std::string::npos);
  CHECK(plan_error({"--ips=10.9.9.8,10.9.9.9", "--host=10.0.0.1", "t"}).find("--host: 10.0.0.1 is not in --ips") !=
        std::string::npos);
  CHECK(plan_error({"--host=10.0.0.1", "t"}).find("--host") != std::string::npos);
  CHECK(plan_error({"--ips=127.0.0.1,192.0.2.7", "t"}).find("choose one with --host") != std::string::npos);
  CHECK(plan_error({"--ips=10.0.0.1,10.0.0.1", "t"}).find("listed twice") != std::string::npos);
}

TEST_CASE("PS, local counts: servers then workers on 127.0.0.1, Paddle's variables") {
  CountingPorts ports;
  LaunchPlan plan =
      make_launch_plan(parse({"--server_num=2", "--worker_num=2", "t"}), {"/bin/t"}, cpu_host(), ports);
  CHECK(plan.mode == LaunchPlan::Mode::kPs);
  CHECK(ports.taken() == 5);  // 2 servers, 2 workers, 1 rendezvous port
  REQUIRE(plan.processes.size() == 4);
  const ProcessSpec& s1 = plan.processes[1];
  const ProcessSpec& w1 = plan.processes[3];
  CHECK(s1.role == Role::kServer);
  CHECK(s1.log_file == "log/serverlog.1");
  CHECK(w1.log_file == "log/workerlog.1");
  CHECK(env_value(s1, "TRAINING_ROLE") == "PSERVER");
  CHECK(env_value(s1, "PADDLE_PSERVERS_IP_PORT_LIST") == "127.0.0.1:30000,127.0.0.1:30001");
  CHECK(env_value(s1, "PADDLE_TRAINER_ENDPOINTS") == "127.0.0.1:30002,127.0.0.1:30003");
  CHECK(env_value(s1, "PADDLE_PORT") == "30001");
  CHECK(env_value(s1, "POD_IP") == "127.0.0.1");
  CHECK(env_value(s1, "PADDLE_TRAINERS_NUM") == "2");
  CHECK(env_value(s1, "PADDLE_GLOO_RENDEZVOUS") == "3");
  CHECK(env_value(s1, "PADDLE_WITH_GLOO") == "0");
  CHECK(env_value(s1, "PADDLE_GLOO_HTTP_ENDPOINT") == "127.0.0.1:30004");
  CHECK_FALSE(has_env(s1, "PADDLE_TRAINER_ID"));
  CHECK(env_value(w1, "TRAINING_ROLE") == "TRAINER");
  CHECK(env_value(w1, "PADDLE_TRAINER_ID") == "1");
  CHECK(env_value(w1, "PADDLE_PORT") == "30003");
  CHECK(env_value(w1, "RANK") == "1");
  CHECK(env_value(w1, "WORLD_SIZE") == "2");
  CHECK_FALSE(has_env(w1, "CUDA_VISIBLE_DEVICES"));
}

TEST_CASE("PS with a fixed start port numbers servers, workers, then the rendezvous port") {
  LaunchPlan plan = plan_for({"--server_num=1", "--worker_num=2", "--start_port=9000", "t"});
  CHECK(plan.server_endpoints == std::vector<std::string>{"127.0.0.1:9000"});
  CHECK(plan.trainer_endpoints == std::vector<std::string>{"127.0.0.1:9001", "127.0.0.1:9002"});
  CHECK(env_value(plan.processes[0], "PADDLE_GLOO_HTTP_ENDPOINT") == "127.0.0.1:9003");
  CHECK(plan.fixed_local_ports == std::vector<int>{9000, 9001, 9002});
}

TEST_CASE("PS lists across nodes: only this node's processes, global ranks, default worker ports") {
  HostFacts h = cpu_host();
  h.env["POD_IP"] = "10.0.0.2";
  LaunchPlan plan = plan_for({"--servers=10.0.0.1:6170,10.0.0.2:6170", "--workers=10.0.0.1,10.0.0.2", "t"}, h);
  REQUIRE(plan.processes.size() == 2);
  CHECK(plan.processes[0].role == Role::kServer);
  CHECK(plan.processes[0].rank == 1);
  CHECK(plan.processes[0].local_index == 0);
  CHECK(plan.processes[1].role == Role::kWorker);
  CHECK(env_value(plan.processes[1], "PADDLE_TRAINER_ID") == "1");
  CHECK(plan.trainer_endpoints == std::vector<std::string>{"10.0.0.1:6172", "10.0.0.2:6173"});
  CHECK(env_value(plan.processes[1], "PADDLE_GLOO_HTTP_ENDPOINT").starts_with("10.0.0.1:"));
}

TEST_CASE("PS with GPUs gives each worker one GPU, round robin") {
  LaunchPlan plan = plan_for({"--server_num=1", "--worker_num=3", "--gpus=2,3", "t"});
  CHECK(env_value(plan.processes[1], "CUDA_VISIBLE_DEVICES") == "2");
  CHECK(env_value(plan.processes[2], "CUDA_VISIBLE_DEVICES") == "3");
  CHECK(env_value(plan.processes[3], "CUDA_VISIBLE_DEVICES") == "2");
  CHECK(env_value(plan.processes[3], "FLAGS_selected_gpus") == "0");
  CHECK_FALSE(has_env(plan.processes[0], "CUDA_VISIBLE_DEVICES"));
}

TEST_CASE("PS input errors") {
  CHECK(plan_error({"--server_num=2", "--servers=127.0.0.1:6170", "t"}).find("--server_num=2 disagrees with --servers") !=
        std::string::npos);
  CHECK(plan_error({"--worker_num=1", "--workers=127.0.0.1,127.0.0.1:7000", "t"}).find("--worker_num=1 disagrees") !=
        std::string::npos);
  CHECK(plan_error({"--servers=127.0.0.1", "t"}).find("--servers: '127.0.0.1' has no port") != std::string::npos);
  CHECK(plan_error({"--server_num=1", "--run_mode=collective", "t"}).find("--run_mode=collective conflicts") !=
        std::string::npos);
  CHECK(plan_error({"--server_num=1", "--nproc_per_node=2", "t"}).find("--nproc_per_node") != std::string::npos);
  CHECK(plan_error({"--servers=127.0.0.1:7000", "--workers=127.0.0.1:7000", "t"}).find("also a server") !=
        std::string::npos);
  CHECK(plan_error({"--servers=10.0.0.1:7000", "--workers=10.0.0.2:7000", "t"}).find("this node is not in") !=
        std::string::npos);
  CHECK(plan_error({"--server_num=1", "--ips=127.0.0.1,127.0.0.2", "t"}).find("--ips=127.0.0.1,127.0.0.2 lists 2 nodes") !=
        std::string::npos);
}

TEST_CASE("--run_mode=ps alone runs one server and one worker") {
  LaunchPlan plan = plan_for({"--run_mode=ps", "t"});
  REQUIRE(plan.processes.size() == 2);
  CHECK(plan.processes[0].role == Role::kServer);
  CHECK(plan.processes[1].role == Role::kWorker);
}

TEST_CASE("the child environment drops proxies and counts restarts") {
  LaunchPlan plan = plan_for({"t"});
  EnvMap env = child_environment({{"http_proxy", "x"}, {"https_proxy", "y"}, {"HOME", "/root"}}, plan.processes[0], 2);
  CHECK(env.count("http_proxy") == 0);
  CHECK(env.count("https_proxy") == 0);
  CHECK(env["HOME"] == "/root");
  CHECK(env["PADDLE_RESTART_COUNT"] == "2");
  CHECK(env["PADDLE_TRAINER_ID"] == "0");
}

TEST_CASE("--iface, or on several nodes the interface of this node's address, names the workers' socket interface") {
  HostFacts host = cpu_host();
  host.interfaces = {{"lo", "127.0.0.1"}, {"eth7", "192.0.2.7"}};
  LaunchPlan multi = plan_for({"--ips=192.0.2.7,192.0.2.8", "x"}, host);
  CHECK(env_value(multi.processes[0], "GLOO_SOCKET_IFNAME") == "eth7");
  CHECK(env_value(multi.processes[0], "NCCL_SOCKET_IFNAME") == "eth7");
  LaunchPlan one = plan_for({"--nproc_per_node=2", "x"}, host);
  CHECK(env_value(one.processes[0], "GLOO_SOCKET_IFNAME") == "<unset>");
  LaunchPlan chosen = plan_for({"--iface=lo", "x"}, host);
  CHECK(env_value(chosen.processes[0], "NCCL_SOCKET_IFNAME") == "lo");
  host.env["GLOO_SOCKET_IFNAME"] = "ib0";
  LaunchPlan user = plan_for({"--ips=192.0.2.7,192.0.2.8", "x"}, host);
  CHECK(env_value(user.processes[0], "GLOO_SOCKET_IFNAME") == "<unset>");  // the user's own setting stands
  CHECK(env_value(user.processes[0], "NCCL_SOCKET_IFNAME") == "eth7");
  CHECK(plan_error({"--iface=wlan9", "x"}, host) ==
        "--iface: this node has no interface 'wlan9'; it has lo (127.0.0.1), eth7 (192.0.2.7)");
}
