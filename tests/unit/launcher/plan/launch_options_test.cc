#include <doctest/doctest.h>

#include "common/error.h"
#include "tests/unit/launcher/test_support.h"

using namespace paddle::launcher;
using paddle::launcher::testing::parse;

TEST_CASE("every flag of the contract parses, in both --flag=value and --flag value forms") {
  LaunchOptions o = parse({"--gpus=0,1", "--nproc_per_node", "2", "--ips=10.0.0.1,10.0.0.2", "--host", "10.0.0.2",
                           "--start_port=7000", "--log_dir=/tmp/x", "--run_mode=collective", "--backend=nccl",
                           "--http_port=8000", "--max_restarts=3", "--grace_period=0.5", "train", "--lr", "0.1"});
  CHECK(*o.gpus == "0,1");
  CHECK(*o.nproc_per_node == 2);
  CHECK(o.ips == "10.0.0.1,10.0.0.2");
  CHECK(*o.host == "10.0.0.2");
  CHECK(*o.start_port == 7000);
  CHECK(o.log_dir == "/tmp/x");
  CHECK(o.run_mode == "collective");
  CHECK(o.backend == "nccl");
  CHECK(*o.http_port == 8000);
  CHECK(o.max_restarts == 3);
  CHECK(o.grace_period == doctest::Approx(0.5));
  CHECK(o.training_script == "train");
  CHECK(o.training_script_args == std::vector<std::string>{"--lr", "0.1"});
}

TEST_CASE("--devices is --gpus, and PS flags parse") {
  LaunchOptions o = parse({"--devices=3", "--server_num=2", "--worker_num=4", "--servers=127.0.0.1:6170",
                           "--workers=127.0.0.1", "x.py"});
  CHECK(*o.gpus == "3");
  CHECK(*o.server_num == 2);
  CHECK(*o.worker_num == 4);
  CHECK(*o.servers == "127.0.0.1:6170");
  CHECK(*o.workers == "127.0.0.1");
}

TEST_CASE("defaults are the contract's") {
  LaunchOptions o = parse({"train"});
  CHECK_FALSE(o.gpus);
  CHECK(o.ips == "127.0.0.1");
  CHECK(o.log_dir == "log");
  CHECK(o.backend == "auto");
  CHECK(o.max_restarts == 0);
  CHECK(o.grace_period == doctest::Approx(5.0));
  CHECK_FALSE(o.dry_run);
}

TEST_CASE("everything after the script belongs to the script, even launcher-looking flags") {
  LaunchOptions o = parse({"--nproc_per_node=2", "train", "--nproc_per_node=8", "--dry_run", "--", "-x"});
  CHECK(*o.nproc_per_node == 2);
  CHECK_FALSE(o.dry_run);
  CHECK(o.training_script_args == std::vector<std::string>{"--nproc_per_node=8", "--dry_run", "--", "-x"});
}

TEST_CASE("--dry_run takes no argument unless given with =") {
  CHECK(*parse({"--dry_run", "train"}).dry_run == "table");
  CHECK(parse({"--dry_run", "train"}).training_script == "train");
  CHECK(*parse({"--dry_run=json", "train"}).dry_run == "json");
  CHECK_THROWS_AS(parse({"--dry_run=yaml", "train"}), paddle::common::UsageError);
}

TEST_CASE("bad flags are usage errors that name the flag") {
  auto message = [](std::vector<std::string> args) {
    try {
      parse(std::move(args));
    } catch (const paddle::common::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message({"--start_port=70000", "t"}).find("--start_port") != std::string::npos);
  CHECK(message({"--http_port=0", "t"}).find("--http_port") != std::string::npos);
  CHECK(message({"--nproc_per_node=0", "t"}).find("--nproc_per_node") != std::string::npos);
  CHECK(message({"--nproc_per_node=two", "t"}).find("--nproc_per_node") != std::string::npos);
  CHECK(message({"--backend=mpi", "t"}).find("--backend") != std::string::npos);
  CHECK(message({"--run_mode=elastic", "t"}).find("--run_mode") != std::string::npos);
  CHECK(message({"--no_such_flag=1", "t"}).find("--no_such_flag") != std::string::npos);
  CHECK(message({"--nproc_per_node=2"}).find("missing training_script") != std::string::npos);
}

TEST_CASE("--help and --version are actions, not errors") {
  const char* help[] = {"paddle-launch", "--help"};
  CommandLine h = parse_command_line(2, help);
  CHECK(h.action == CommandLine::Action::kHelp);
  CHECK(h.text.find("--nproc_per_node") != std::string::npos);
  CHECK(h.text.find("--grace_period") != std::string::npos);
  const char* version[] = {"paddle-launch", "--version"};
  CHECK(parse_command_line(2, version).action == CommandLine::Action::kVersion);
}

TEST_CASE("describe_options is sorted and shows unset values as None, args as a Python list") {
  auto rows = describe_options(parse({"--nproc_per_node=2", "train.py", "--epochs", "3"}));
  for (size_t i = 1; i < rows.size(); ++i) CHECK(rows[i - 1].first < rows[i].first);
  auto find = [&](const std::string& name) {
    for (auto& [k, v] : rows)
      if (k == name) return v;
    return std::string("<missing>");
  };
  CHECK(find("gpus") == "None");
  CHECK(find("nproc_per_node") == "2");
  CHECK(find("training_script") == "train.py");
  CHECK(find("training_script_args") == "['--epochs', '3']");
}
