#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "launcher/dispatch/cluster_conf.h"
#include "launcher/dispatch/remote_hosts.h"

namespace paddle::launcher {
namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("paddle-launch-test-" + name);
  std::ofstream(path) << text;
  return path.string();
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

TEST_CASE("hosts are user@host:port, each part optional but the host") {
  const RemoteHost h = parse_remote_host("root@192.168.100.18:9090", "--hosts");
  CHECK(h.user == "root");
  CHECK(h.host == "192.168.100.18");
  CHECK(h.port == 9090);
  CHECK(h.name() == "root@192.168.100.18:9090");
  CHECK(h.destination() == "root@192.168.100.18");
  CHECK(parse_remote_host("node-1", "--hosts").name() == "node-1");
  CHECK(error_of([] { parse_remote_host("root@", "--hosts"); }).starts_with("--hosts: 'root@'"));
  CHECK(error_of([] { parse_remote_host("a:b", "--hosts"); }).starts_with("--hosts: 'a:b'"));
  CHECK(error_of([] { parse_host_list("a,b,a", "--hosts"); }) == "--hosts: host a is listed twice");
}

TEST_CASE("a hostfile takes DeepSpeed's `host slots=N` lines and names the line at fault") {
  const std::string path = write_temp("hostfile", "# the job's hosts\nworker-1 slots=2\n\nroot@worker-2:2222  # two\n");
  const auto hosts = read_hostfile(path);
  REQUIRE(hosts.size() == 2);
  CHECK(hosts[0].host == "worker-1");
  CHECK(hosts[0].slots == 2);
  CHECK(hosts[1].port == 2222);
  CHECK_FALSE(hosts[1].slots);
  const std::string bad = write_temp("hostfile-bad", "worker-1 slots=2\nworker-2 gpus=3\n");
  CHECK(error_of([&] { read_hostfile(bad); }) == bad + ":2: 'gpus=3': a host takes only slots=N after it");
  CHECK(error_of([&] { read_hostfile(write_temp("hostfile-empty", "# none\n")); }).ends_with("names no host"));
}

TEST_CASE("--include and --exclude pick hosts by name, in the hostfile's order") {
  const auto hosts = parse_host_list("a,b,c", "--hosts");
  auto names = [](const std::vector<RemoteHost>& hs) {
    std::string s;
    for (const auto& h : hs) s += h.host;
    return s;
  };
  CHECK(names(select_hosts(hosts, "c,a", "")) == "ac");
  CHECK(names(select_hosts(hosts, "", "b")) == "ac");
  CHECK(names(select_hosts(hosts, "a@b", "a")) == "b");
  CHECK(error_of([&] { select_hosts(hosts, "d", ""); }) == "--include: 'd' is not one of the job's hosts");
  CHECK(error_of([&] { select_hosts(hosts, "", "a,b,c"); }) == "--include/--exclude: no host is left to run on");
}

TEST_CASE("the seed's conf.py reads as it is") {
  const std::string path = write_temp("conf.py", R"(# Copyright (c) 2016 PaddlePaddle Authors. All Rights Reserved

HOSTS = [
    "root@192.168.100.17",
    "root@192.168.100.18:9090",
]
'''
workspace configuration
'''
#root dir for workspace, can be set as any director with real user account
ROOT_DIR = "/home/paddle"
'''
network configuration
'''
#pserver nics
PADDLE_NIC = "eth0"
#pserver port
PADDLE_PORT = 7164
#pserver ports num
PADDLE_PORTS_NUM = 2
#pserver sparse ports num
PADDLE_PORTS_NUM_FOR_SPARSE = 2
#trainer whether use gpu
PADDLE_USE_GPU = "False"

#environments setting for all processes in cluster job
LD_LIBRARY_PATH = "/usr/local/cuda/lib64:/usr/lib64"
)");
  const ClusterConf conf = read_cluster_conf(path);
  REQUIRE(conf.hosts.size() == 2);
  CHECK(conf.hosts[1].port == 9090);
  CHECK(conf.hosts[0].user == "root");
  CHECK(conf.root_dir == "/home/paddle");
  CHECK(conf.nic == "eth0");
  CHECK(conf.port == 7164);
  CHECK(conf.ports_num == 2);
  CHECK(conf.ports_num_for_sparse == 2);
  CHECK(conf.ld_library_path == "/usr/local/cuda/lib64:/usr/lib64");
  REQUIRE(conf.ignored.size() == 1);
  CHECK(conf.ignored[0] == "PADDLE_USE_GPU (" + path + ":24)");
}

TEST_CASE("anything but plain assignments in conf.py is one line naming conf.py:LINE") {
  const auto error = [](const std::string& text) {
    const std::string path = write_temp("conf-bad.py", text);
    const std::string e = error_of([&] { read_cluster_conf(path); });
    return e.substr(e.find(".py") + 3);
  };
  CHECK(error("HOSTS = ['a']\nimport os\n").starts_with(":2: expected '=' after import"));
  CHECK(error("HOSTS = ['a']\nROOT_DIR = os.getcwd()\n").starts_with(":2: a value must be a string"));
  CHECK(error("HOSTS = ['a', 3]\n").starts_with(":1: a list holds only strings"));
  CHECK(error("HOSTS = ['a'] + ['b']\n").starts_with(":1: unexpected text after the value"));
  CHECK(error("ROOT_DIR = '/x'\n").starts_with(" sets no HOSTS"));
  CHECK(error("HOSTS = ['a']\nPADDLE_PORT = 99999\n").starts_with(":2: PADDLE_PORT"));
}

}  // namespace
}  // namespace paddle::launcher
