#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "common/error.h"
#include "launcher/dispatch/dispatch_plan.h"
#include "launcher/dispatch/ssh_command.h"

namespace paddle::launcher {
namespace {

namespace fs = std::filesystem;

// A package directory named `name` in a fresh temporary directory.
std::string make_package(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / "paddle-launch-dispatch-test" / name;
  fs::create_directories(dir);
  return dir.string();
}

DispatchPlan plan_of(std::vector<std::string> args, const EnvMap& env = {}) {
  args.insert(args.begin(), "paddle-launch");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return make_dispatch_plan(parse_command_line(static_cast<int>(argv.size()), argv.data()).options, env, 23456);
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const common::UsageError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST_CASE("words are quoted for the remote shell only where they need it") {
  CHECK(shell_quote("--set=a.b:1,2/x") == "--set=a.b:1,2/x");
  CHECK(shell_quote("two words") == "'two words'");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("$HOME") == "'$HOME'");
  CHECK(shell_command({"echo", "a b", "c"}) == "echo 'a b' c");
}

TEST_CASE("ssh never prompts, times out connecting, and takes the user's options before the destination") {
  RemoteHost host = parse_remote_host("root@10.0.0.2:2222", "--hosts");
  SshSettings ssh{split_ssh_options({"-i /k/id", "-o UserKnownHostsFile=/k/known"}), 7};
  const auto argv = ssh_argv(host, ssh, "cd w && exec x");
  CHECK(argv.front() == "ssh");
  CHECK(argv.back() == "cd w && exec x");
  CHECK(argv[argv.size() - 2] == "root@10.0.0.2");
  const std::string line = shell_command(argv);
  CHECK(line.find("-o BatchMode=yes") != std::string::npos);
  CHECK(line.find("-o ConnectTimeout=7") != std::string::npos);
  CHECK(line.find("-p 2222 -i /k/id -o UserKnownHostsFile=/k/known root@10.0.0.2") != std::string::npos);
}

TEST_CASE("rsync goes over the same ssh, deletes what the package lost, and keeps the logs") {
  RemoteHost host = parse_remote_host("u@h:2200", "--hosts");
  SshSettings ssh{split_ssh_options({"-i /keys/it's"}), 10};
  const auto argv = rsync_push_argv(host, ssh, "/src/pkg", "jobs/pkg", {"log", "output"});
  CHECK(argv[0] == "rsync");
  CHECK(std::find(argv.begin(), argv.end(), "--delete") != argv.end());
  CHECK(std::find(argv.begin(), argv.end(), "--exclude=/log") != argv.end());
  CHECK(argv[argv.size() - 2] == "/src/pkg/");
  CHECK(argv.back() == "u@h:jobs/pkg/");
  const auto e = std::find(argv.begin(), argv.end(), "-e");
  REQUIRE(e != argv.end());
  CHECK(e[1].starts_with("ssh -o BatchMode=yes"));
  CHECK(e[1].find("-p 2200") != std::string::npos);
  CHECK(e[1].ends_with("-i \"/keys/it's\""));  // rsync's own splitting takes no backslashes
}

TEST_CASE("ssh's reason is its last line, without the host-key notice") {
  CHECK(ssh_reason("Warning: Permanently added 'h' (ED25519) to the list of known hosts.\r\n"
                   "root@h: Permission denied (publickey).\r\n\n") == "root@h: Permission denied (publickey).");
  CHECK(ssh_reason("") == "no output");
}

// Runs a preflight command here with /bin/sh and no PATH but /bin: (exit status, output).
std::pair<int, std::string> run_preflight(const std::string& command) {
  const std::string line = "PATH=/usr/bin:/bin /bin/sh -c " + shell_quote(command) + " 2>&1";
  FILE* pipe = ::popen(line.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buffer[256];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

DispatchPlan plan_with_own_path(std::vector<std::string> args, const std::string& own_path) {
  args.insert(args.begin(), "paddle-launch");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return make_dispatch_plan(parse_command_line(static_cast<int>(argv.size()), argv.data()).options, {}, 23456, own_path);
}

TEST_CASE("without --remote_launcher a host runs paddle-launch from its PATH, else the dispatcher's own path") {
  const std::string package = "--job_dispatch_package=" + make_package("pkg");
  const DispatchPlan plan = plan_with_own_path({"--hosts=a,b", package, "x"}, "/opt/build/launcher/paddle-launch");
  CHECK(plan.remote_launchers == std::vector<std::string>{"paddle-launch", "/opt/build/launcher/paddle-launch"});
  CHECK(plan.agent_command(0, "10.0.0.1", "/opt/build/launcher/paddle-launch")
            .starts_with("cd paddle-jobs/pkg && exec /opt/build/launcher/paddle-launch --agent "));
  const DispatchPlan given = plan_with_own_path({"--hosts=a", package, "--remote_launcher=/usr/bin/pl", "x"}, "/o/pl");
  CHECK(given.remote_launchers == std::vector<std::string>{"/usr/bin/pl"});
}

TEST_CASE("the preflight finds the first launcher there and names every place tried when none is") {
  const std::string fake = make_package("bin") + "/fake-launcher";
  std::ofstream(fake) << "#!/bin/sh\necho \"fake $1\"\n";
  fs::permissions(fake, fs::perms::owner_all);
  DispatchPlan plan = plan_with_own_path({"--hosts=a", "--job_dispatch_package=" + make_package("pkg"), "x"}, fake);
  plan.remote_launchers.front() = "no-such-paddle-launch";
  auto [status, output] = run_preflight(plan.preflight_command());
  CHECK(status == 0);
  CHECK(launcher_found(output) == std::optional<std::string>(fake));
  CHECK(ssh_reason(output) == "fake --version");

  plan.remote_launchers.back() = "/nonexistent/build/paddle-launch";
  std::tie(status, output) = run_preflight(plan.preflight_command());
  CHECK(status == 127);
  CHECK(output == "no-such-paddle-launch nor /nonexistent/build/paddle-launch: not found on this host; "
                  "give --remote_launcher=PATH\n");
  CHECK_FALSE(launcher_found(output));

  plan.remote_launchers = {"/nonexistent/pl"};
  std::tie(status, output) = run_preflight(plan.preflight_command());
  CHECK(status == 127);
  CHECK(output == "/nonexistent/pl: not found on this host; check --remote_launcher\n");
}

TEST_CASE("each host's agent gets the master on host 0, its rank, the user's flags, and no secret") {
  const std::string package = make_package("pkg");
  const DispatchPlan plan = plan_of({"--hosts=root@10.0.0.1,root@10.0.0.2:2222", "--job_dispatch_package=" + package,
                                     "--root_dir=/srv/jobs/", "--backend=gloo", "--max_restarts=2", "--env=TOKEN_B",
                                     "--env", "A=1 2", "train", "--config", "c.json"},
                                    {{"TOKEN_B", "b"}, {"PADDLE_JOB_TOKEN", "t0k3n"}});
  CHECK(plan.job_id == "pkg");
  CHECK(plan.workspace == "/srv/jobs/pkg");
  CHECK(plan.package == package);
  CHECK(plan.master_port == 23456);
  const std::string command = plan.agent_command(1, "10.0.0.1", "paddle-launch");
  CHECK(command ==
        "cd /srv/jobs/pkg && exec paddle-launch --agent --master=10.0.0.1:23456 --nnodes=2 --rank=1 --job_id=pkg "
        "--backend=gloo --max_restarts=2 train --config c.json");
  CHECK(plan.agent_env == nlohmann::json{{"TOKEN_B", "b"}, {"A", "1 2"}, {"PADDLE_JOB_TOKEN", "t0k3n"}});
  CHECK(command.find("t0k3n") == std::string::npos);
  CHECK(std::find(plan.not_copied.begin(), plan.not_copied.end(), "log") != plan.not_copied.end());
}

TEST_CASE("slots become a host's process count unless the user gave one; the master port follows --start_port") {
  const std::string package = make_package("slots");
  const std::string hostfile = (fs::path(package).parent_path() / "hostfile").string();
  std::ofstream(hostfile) << "a slots=2\nb slots=4\n";
  DispatchPlan plan = plan_of({"--hostfile=" + hostfile, "--job_dispatch_package=" + package, "--start_port=7000", "x"});
  CHECK(plan.agent_command(1, "1.2.3.4", "paddle-launch").find("--master=1.2.3.4:6999") != std::string::npos);
  CHECK(plan.agent_command(1, "1.2.3.4", "paddle-launch").find("--nproc_per_node=4 x") != std::string::npos);
  plan = plan_of({"--hostfile=" + hostfile, "--job_dispatch_package=" + package, "--nproc_per_node=1", "x"});
  CHECK(plan.agent_command(1, "1.2.3.4", "paddle-launch").find("--nproc_per_node=1 x") != std::string::npos);
  CHECK(plan.agent_command(1, "1.2.3.4", "paddle-launch").find("--nproc_per_node=4") == std::string::npos);
}

TEST_CASE("conf.py gives the hosts, ROOT_DIR, the first port, the NIC and LD_LIBRARY_PATH") {
  const std::string package = make_package("confjob");
  const std::string conf = (fs::path(package).parent_path() / "conf.py").string();
  std::ofstream(conf) << "HOSTS = [\"root@10.0.0.1\", \"root@10.0.0.2:9090\"]\nROOT_DIR = \"/home/paddle\"\n"
                         "PADDLE_NIC = \"eth0\"\nPADDLE_PORT = 7164\nPADDLE_PORTS_NUM = 2\nLD_LIBRARY_PATH = \"/l\"\n";
  const DispatchPlan plan = plan_of({"--cluster_conf=" + conf, "--job_dispatch_package=" + package, "x"});
  CHECK(plan.hosts.size() == 2);
  CHECK(plan.workspace == "/home/paddle/confjob");
  CHECK(plan.master_port == 7163);
  CHECK(plan.agent_command(0, "10.0.0.1", "paddle-launch").find("--start_port=7164") != std::string::npos);
  nlohmann::json env = plan.agent_env;
  CHECK(env["PADDLE_JOB_TOKEN"].get<std::string>().size() == 48);  // a new one, shared by every node
  env.erase("PADDLE_JOB_TOKEN");
  CHECK(env == nlohmann::json{{"PADDLE_NIC", "eth0"}, {"LD_LIBRARY_PATH", "/l"}});
  CHECK(plan.notes.size() == 1);
}

TEST_CASE("bad dispatch input is one line naming the flag") {
  const std::string package = make_package("bad");
  const std::string p = "--job_dispatch_package=" + package;
  CHECK(error_of([&] { plan_of({"--hosts=a", p, "--rank=1", "x"}); }).starts_with("--rank: a job dispatched over SSH"));
  CHECK(error_of([&] { plan_of({"--hosts=a", p, "--ips=1.2.3.4", "x"}); }).starts_with("--ips:"));
  CHECK(error_of([&] { plan_of({"--hosts=a", "x"}); }).starts_with("a dispatched job needs a workspace"));
  CHECK(error_of([&] { plan_of({"--hosts=a", p, "--job_workspace=/w", "x"}); }).starts_with("give one of"));
  CHECK(error_of([&] { plan_of({"--hosts=a", "--job_dispatch_package=/no/such/dir", "x"}); }) ==
        "--job_dispatch_package: '/no/such/dir' is not a directory");
  CHECK(error_of([&] { plan_of({"--hosts=a", p, "--env=UNSET_HERE", "x"}); }) ==
        "--env=UNSET_HERE: UNSET_HERE is not set here; give --env=UNSET_HERE=VALUE");
  CHECK(error_of([&] { plan_of({"--hosts=a", p, "--env=1X=2", "x"}); }) == "--env=1X=2: '1X' is not a variable name");
  CHECK(error_of([&] { plan_of({"--hosts=a", "--hostfile=h", p, "x"}); }) == "give one of --hostfile, --hosts and --cluster_conf");
  CHECK(error_of([&] { plan_of({"--hosts=a", p, "--job_id=a/b", "x"}); }).starts_with("--job_id: 'a/b'"));
}

}  // namespace
}  // namespace paddle::launcher
