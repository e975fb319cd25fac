// Paddle's launchers' flags and their PADDLE_* twins (plan/paddle_flags.h), and what Paddle 3's
// launcher adds to each process (plan/worker_contract.h).

#include "launcher/plan/paddle_flags.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "launcher/plan/rank_map.h"
#include "launcher/plan/worker_contract.h"
#include "launcher/supervise/backup_env_file.h"
#include "launcher/plan/worker_contract.h"
#include "tests/unit/launcher/test_support.h"

namespace paddle::launcher {
namespace {

using common::UsageError;
using testing::env_value;

LaunchOptions parse_with(std::vector<std::string> args, const EnvMap& env) {
  std::vector<const char*> argv{"paddle-launch"};
  for (const auto& a : args) argv.push_back(a.c_str());
  return parse_command_line(static_cast<int>(argv.size()), argv.data(), env).options;
}

std::string error_of(std::vector<std::string> args, const EnvMap& env = {}) {
  try {
    parse_with(std::move(args), env);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

bool has(const ProcessSpec& p, const std::string& name) {
  return std::ranges::any_of(p.env, [&](const auto& v) { return v.first == name; });
}

TEST_CASE("Paddle's spellings: --flag value, --flag=value, and strtobool's words in any case") {
  const LaunchOptions a = parse_with({"--log_level", "debug", "--log_overwrite=False", "--sort_ip", "TRUE",
                                      "--enable_gpu_log=off", "--auto_cluster_config", "y", "t"},
                                     {});
  CHECK(a.log_level == "DEBUG");
  CHECK_FALSE(a.log_overwrite);
  CHECK(a.sort_ip);
  CHECK_FALSE(a.enable_gpu_log);
  CHECK(a.auto_cluster_config);
  const LaunchOptions d = parse_with({"t"}, {});
  CHECK(d.log_level == "INFO");
  CHECK(d.log_overwrite);
  CHECK_FALSE(d.sort_ip);
  CHECK(d.enable_gpu_log);
  CHECK(error_of({"--sort_ip=maybe", "t"}).find("--sort_ip") != std::string::npos);
  CHECK(error_of({"--log_level=LOUD", "t"}).find("--log_level") != std::string::npos);
}

TEST_CASE("a twin is read when its flag is not given; the flag wins and the twin it overrides is named") {
  const EnvMap env = {{"PADDLE_NPROC_PER_NODE", "3"}, {"PADDLE_LOG_LEVEL", "warning"}, {"PADDLE_SERVER_NUM", "1"},
                      {"PADDLE_TRAINER_NUM", "2"}, {"PADDLE_LOG_DIR", "/tmp/pl"}, {"PADDLE_START_PORT", "7100"}};
  const LaunchOptions o = parse_with({"t"}, env);
  CHECK(*o.nproc_per_node == 3);
  CHECK(o.log_level == "WARNING");
  CHECK(*o.server_num == 1);
  CHECK(*o.worker_num == 2);
  CHECK(o.log_dir == "/tmp/pl");
  CHECK(*o.start_port == 7100);
  CHECK(o.notices.empty());
  CHECK(o.given_flags.empty());  // a dispatched job passes on only what the command line gave

  const LaunchOptions flag = parse_with({"--nproc_per_node=2", "--worker_num=4", "t"}, env);
  CHECK(*flag.nproc_per_node == 2);
  CHECK(*flag.worker_num == 4);  // --worker_num is PADDLE_TRAINER_NUM's setting too
  REQUIRE(flag.notices.size() == 2);
  CHECK(flag.notices[0].starts_with("PADDLE_NPROC_PER_NODE=3 is ignored: --nproc_per_node was given"));
  CHECK(flag.notices[1].starts_with("PADDLE_TRAINER_NUM=2 is ignored: --worker_num was given"));
}

TEST_CASE("a bad twin is one error naming the variable; an empty one is unset") {
  CHECK(error_of({"t"}, {{"PADDLE_NPROC_PER_NODE", "many"}}).starts_with("PADDLE_NPROC_PER_NODE=many: "));
  CHECK(error_of({"t"}, {{"PADDLE_SORT_IP", "perhaps"}}).starts_with("PADDLE_SORT_IP=perhaps: "));
  CHECK(error_of({"t"}, {{"PADDLE_PS_WORKER_RESTARTS", "-1"}}).starts_with("PADDLE_PS_WORKER_RESTARTS=-1: "));
  CHECK_FALSE(parse_with({"t"}, {{"PADDLE_NPROC_PER_NODE", ""}}).nproc_per_node);
}

TEST_CASE("the twins read where used are not given to the parser, but an overridden one is named") {
  const LaunchOptions o = parse_with({"t"}, {{"PADDLE_MASTER", "10.0.0.1:9000"}, {"POD_IP", "10.0.0.2"}});
  CHECK_FALSE(o.master);
  CHECK_FALSE(o.host);
  const LaunchOptions both = parse_with({"--master=10.0.0.3:9000", "t"}, {{"PADDLE_MASTER", "10.0.0.1:9000"}});
  REQUIRE(both.notices.size() == 1);
  CHECK(both.notices[0].starts_with("PADDLE_MASTER=10.0.0.1:9000 is ignored: --master was given"));
}

TEST_CASE("Paddle's other names of our settings; two names of one setting that disagree are an error") {
  const LaunchOptions o = parse_with({"--trainers=127.0.0.1:6200", "--trainer_num", "2", "--gloo_port=6767",
                                      "--max_restart=2", "--selected_gpus=1", "--servers=127.0.0.1:6170", "t"},
                                     {});
  CHECK(*o.workers == "127.0.0.1:6200");
  CHECK(*o.worker_num == 2);
  CHECK(*o.http_port == 6767);
  CHECK(o.max_restarts == 2);
  CHECK(*o.gpus == "1");
  CHECK(error_of({"--workers=a", "--trainers=b", "t"}) ==
        "--trainers=b and --workers=a name the same setting; give one");
  CHECK(error_of({"--max_restart=1", "--max_restarts=2", "t"}).find("name the same setting") != std::string::npos);
  CHECK(error_of({"--xpus=0", "--gpus=1", "t"}).find("both name this node's devices") != std::string::npos);
  const LaunchOptions e = parse_with({"--elastic_server=10.0.0.9:2379", "--np=2:4", "t"}, {});
  CHECK(*e.master == "etcd://10.0.0.9:2379");
  CHECK(*e.nnodes == "2:4");
}

TEST_CASE("--elastic_level is Paddle's restart policy: its budget, --max_restart's, and its grace") {
  const LaunchOptions on = parse_with({"--elastic_level=1", "t"}, {});
  CHECK(on.max_restarts == 3);
  CHECK(on.grace_period == doctest::Approx(30.0));
  const LaunchOptions budget = parse_with({"--elastic_level=1", "--max_restart=5", "--grace_period=2", "t"}, {});
  CHECK(budget.max_restarts == 5);
  CHECK(budget.grace_period == doctest::Approx(2.0));
  const LaunchOptions off = parse_with({"--elastic_level=-1", "t"}, {});
  CHECK(off.max_restarts == 0);
  CHECK(off.grace_period == doctest::Approx(3.0));
  CHECK(parse_with({"--max_restart=2", "t"}, {}).max_restarts == 2);
  CHECK(error_of({"--elastic_level=0", "--max_restart=2", "t"}).find("--elastic_level=0 stops the job") != std::string::npos);
}

TEST_CASE("unbuilt features are refused in one line that names them and says what to do; no-ops warn") {
  CHECK(error_of({"--auto_tuner_json=a.json", "t"}).starts_with("--auto_tuner_json: Paddle's auto-tuner"));
  CHECK(error_of({"--coordinator_num=1", "t"}).starts_with("--coordinator_num: a parameter-server job's coordinators"));
  CHECK(error_of({"--rank_mapping_path=m.json", "t"}).starts_with("--rank_mapping_path: auto-parallel rank mapping"));
  CHECK(error_of({"--run_mode=rpc", "t"}).find("--run_mode: rpc, Paddle's RPC mode, is not built") != std::string::npos);
  CHECK(error_of({"--sort_ip=1", "--rank=1", "t"}).find("give one") != std::string::npos);
  const LaunchOptions o = parse_with({"--scale=1", "t"}, {});
  REQUIRE(o.notices.size() == 1);
  CHECK(o.notices[0] == "--scale=1 has no effect: Paddle's elastic launcher reads it and uses it nowhere");
}

TEST_CASE("--auto_parallel_config passes a tuned configuration on; its tuner's pre-run is refused") {
  const auto dir = std::filesystem::temp_directory_path() / "paddle_flags_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "run.json") << R"({"tuner_run_mode": "run"})";
  std::ofstream(dir / "tune.json") << R"({"dp_degree": 2})";
  const LaunchOptions o = parse_with({"--auto_parallel_config=" + (dir / "run.json").string(), "t"}, {});
  testing::CountingPorts ports;
  const LaunchPlan plan = make_launch_plan(o, {"t"}, testing::cpu_host(), ports);
  CHECK(env_value(plan.processes[0], "PADDLE_AUTO_PARALLEL_CONFIG") == (dir / "run.json").string());
  CHECK(env_value(plan.processes[0], "PADDLE_AUTO_PARALLEL_STAGE") == "run");
  CHECK(error_of({"--auto_parallel_config=" + (dir / "tune.json").string(), "t"})
            .find("the auto-parallel tuner's pre-run (tuner_run_mode tuner_and_run") != std::string::npos);
  CHECK(error_of({"--auto_parallel_config=/no/such.json", "t"}) == "--auto_parallel_config: cannot read '/no/such.json'");
  std::filesystem::remove_all(dir);
}

TEST_CASE("Paddle's legacy rule: --legacy, or a flag only fleet.launch knows given without a master") {
  CHECK_FALSE(parse_with({"t"}, {}).legacy);
  CHECK(parse_with({"--legacy=1", "t"}, {}).legacy_reason == "--legacy");
  const LaunchOptions backend = parse_with({"--backend=gloo", "t"}, {});
  CHECK(backend.legacy);
  CHECK(backend.legacy_reason.starts_with("--backend"));
  CHECK_FALSE(parse_with({"--backend=gloo", "--master=10.0.0.1:9000", "t"}, {}).legacy);
  CHECK_FALSE(parse_with({"--backend=gloo", "t"}, {{"PADDLE_MASTER", "10.0.0.1:9000"}}).legacy);
  CHECK_FALSE(parse_with({"--server_num=1", "--trainer_num=2", "t"}, {}).legacy);
  CHECK(parse_with({"--server_num=1", "--worker_num=2", "t"}, {}).legacy);
}

TEST_CASE("the worker contract: Paddle 3's variables, the backup path, and none of them under --legacy") {
  testing::CountingPorts ports;
  HostFacts host = testing::cpu_host();
  host.pod_name = "abcdef";
  const LaunchPlan plan = make_launch_plan(testing::parse({"--nproc_per_node=2", "--log_dir=/tmp/lg", "t"}), {"t"}, host, ports);
  const ProcessSpec& p = plan.processes[1];
  CHECK(env_value(p, "PADDLE_LOG_DIR") == "/tmp/lg");
  CHECK(env_value(p, "POD_NAME") == "abcdef");
  CHECK(env_value(p, "PADDLE_AUTO_CLUSTER") == "0");
  CHECK(env_value(p, "PADDLE_BACKUP_ENV_PATH") == "/tmp/lg/backup_env.1.json");
  CHECK(p.backup_env_file == "/tmp/lg/backup_env.1.json");
  CHECK(has(p, "PADDLE_TRAINER_ENDPOINTS"));

  const LaunchPlan legacy = make_launch_plan(testing::parse({"--legacy=1", "--nproc_per_node=2", "t"}), {"t"}, host, ports);
  for (const char* name : {"PADDLE_LOG_DIR", "POD_NAME", "PADDLE_AUTO_CLUSTER", "PADDLE_BACKUP_ENV_PATH"})
    CHECK_FALSE(has(legacy.processes[0], name));
  CHECK(legacy.processes[0].backup_env_file.empty());

  const LaunchPlan ps = make_launch_plan(testing::parse({"--server_num=1", "--trainer_num=1", "t"}), {"t"}, host, ports);
  CHECK(env_value(ps.processes[0], "PADDLE_WITH_GLOO") == "1");  // the new launcher's default
  CHECK_FALSE(has(ps.processes[0], "PADDLE_BACKUP_ENV_PATH"));  // a server has no PADDLE_TRAINER_ID
  CHECK(env_value(ps.processes[1], "PADDLE_BACKUP_ENV_PATH").ends_with("backup_env.0.json"));
}

TEST_CASE("PADDLE_TRAINER_ENDPOINTS at PADDLE_ENV_LIMIT_LEN or longer lives in the backup alone") {
  testing::CountingPorts ports;
  HostFacts host = testing::cpu_host();
  host.env["PADDLE_ENV_LIMIT_LEN"] = "31";  // "127.0.0.1:30000,127.0.0.1:30001" is 31 long
  host.env["PADDLE_TRAINER_ENDPOINTS"] = "stale";
  const LaunchPlan plan = make_launch_plan(testing::parse({"--nproc_per_node=2", "t"}), {"t"}, host, ports);
  const ProcessSpec& p = plan.processes[0];
  CHECK_FALSE(has(p, "PADDLE_TRAINER_ENDPOINTS"));
  REQUIRE(p.env_backup_only.size() == 1);
  CHECK(p.env_backup_only[0].second == "127.0.0.1:30000,127.0.0.1:30001");
  const EnvMap child = child_environment(host.env, p, 0);
  CHECK_FALSE(child.contains("PADDLE_TRAINER_ENDPOINTS"));  // nor the launcher's own, stale one
  const std::string backup = backup_env_json(p, child);
  CHECK(backup.find(R"("PADDLE_TRAINER_ENDPOINTS": "127.0.0.1:30000,127.0.0.1:30001")") != std::string::npos);
  host.env["PADDLE_ENV_LIMIT_LEN"] = "32";
  CHECK(has(make_launch_plan(testing::parse({"--nproc_per_node=2", "t"}), {"t"}, host, ports).processes[0],
            "PADDLE_TRAINER_ENDPOINTS"));
}

TEST_CASE("the backup holds what the launcher set, never a secret, and only its owner reads it") {
  ProcessSpec p;
  p.env = {{"PADDLE_TRAINER_ID", "3"}, {"PADDLE_BACKUP_ENV_PATH", "x"}, {"MY_API_TOKEN", "s3cret"}};
  const auto dir = std::filesystem::temp_directory_path() / "backup_env_test";
  p.backup_env_file = (dir / "backup_env.3.json").string();
  const EnvMap child = {{"PADDLE_TRAINER_ID", "3"}, {"PADDLE_BACKUP_ENV_PATH", "x"}, {"MY_API_TOKEN", "s3cret"},
                        {"PADDLE_JOB_TOKEN", "s3cret"}, {"HOME", "/root"}, {"PADDLE_RESTART_COUNT", "2"}};
  write_backup_env(p, child);
  std::ifstream in(p.backup_env_file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "{\n    \"PADDLE_RESTART_COUNT\": \"2\",\n    \"PADDLE_TRAINER_ID\": \"3\"\n}\n");
  CHECK((std::filesystem::status(p.backup_env_file).permissions() & std::filesystem::perms::all) ==
        (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
  std::filesystem::remove_all(dir);
}

TEST_CASE("XPUs and NPUs: their ids relative to their own visibility variable, and Paddle's variables") {
  testing::CountingPorts ports;
  HostFacts host = testing::cpu_host();
  host.env["XPU_VISIBLE_DEVICES"] = "4,5,6,7";
  const LaunchPlan xpu = make_launch_plan(testing::parse({"--xpus=6,7", "t"}), {"t"}, host, ports);
  REQUIRE(xpu.processes.size() == 2);
  CHECK(env_value(xpu.processes[1], "FLAGS_selected_xpus") == "3");
  CHECK(env_value(xpu.processes[1], "PADDLE_DISTRI_BACKEND") == "bkcl");
  CHECK_FALSE(has(xpu.processes[1], "FLAGS_selected_gpus"));
  const LaunchPlan npu = make_launch_plan(testing::parse({"--npus=0,1", "--nproc_per_node=1", "t"}), {"t"}, host, ports);
  CHECK(env_value(npu.processes[0], "FLAGS_selected_npus") == "0,1");
  CHECK(env_value(npu.processes[0], "PADDLE_DISTRI_BACKEND") == "xccl");
  CHECK(env_value(npu.processes[0], "PADDLE_XCCL_BACKEND") == "npu");
  CHECK_THROWS_WITH_AS(make_launch_plan(testing::parse({"--xpus=1", "t"}), {"t"}, host, ports),
                       doctest::Contains("--xpus: XPU 1 is not in XPU_VISIBLE_DEVICES=4,5,6,7"), UsageError);
  CHECK_THROWS_WITH_AS(make_launch_plan(testing::parse({"--xpus=4", "--backend=nccl", "t"}), {"t"}, host, ports),
                       doctest::Contains("--backend=nccl"), UsageError);
  const LaunchPlan legacy = make_launch_plan(testing::parse({"--xpus=4", "--legacy=1", "t"}), {"t"}, host, ports);
  CHECK(env_value(legacy.processes[0], "FLAGS_selected_accelerators") == "0");
}

NodeRegistration node(std::string ip, std::string order = "") {
  NodeRegistration n;
  n.ip = std::move(ip);
  n.hostname = "h";
  n.endpoints = {n.ip + ":1"};
  n.order = std::move(order);
  return n;
}

TEST_CASE("the node hosting the master ranks first, as Paddle's; --sort_ip ranks by address alone, on every node") {
  const auto ranked = rank_nodes({node("10.0.0.1"), node("10.0.0.9", "master"), node("10.0.0.5")}, {});
  CHECK(ranked[0].node.ip == "10.0.0.9");
  CHECK(ranked[1].node.ip == "10.0.0.1");
  const auto listed = rank_nodes({node("10.0.0.1"), node("10.0.0.9", "master")}, {"10.0.0.1", "10.0.0.9"});
  CHECK(listed[0].node.ip == "10.0.0.1");  // --ips order comes first
  const auto sorted = rank_nodes({node("10.0.0.10", "sort_ip"), node("10.0.0.9", "sort_ip")}, {"10.0.0.10", "10.0.0.9"});
  CHECK(sorted[0].node.ip == "10.0.0.9");
  CHECK_THROWS_WITH_AS(rank_nodes({node("10.0.0.1", "sort_ip"), node("10.0.0.2", "master")}, {}),
                       doctest::Contains("--sort_ip: node 10.0.0.1 (h) says True, node 10.0.0.2 (h) says False"),
                       UsageError);
  const NodeRegistration back = NodeRegistration::from_json(node("10.0.0.1", "master").to_json().dump());
  CHECK(back.order == "master");
}

}  // namespace
}  // namespace paddle::launcher
