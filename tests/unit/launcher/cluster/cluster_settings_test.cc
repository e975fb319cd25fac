#include <doctest/doctest.h>

#include "common/error.h"
#include "launcher/cluster/cluster_peers.h"
#include "tests/unit/launcher/test_support.h"

namespace paddle::launcher {
namespace {

using testing::parse;

HostFacts loopback_host(EnvMap env = {}) {
  HostFacts host;
  host.env = std::move(env);
  host.local_addresses = {"127.0.0.1"};
  return host;
}

std::string settings_error(std::vector<std::string> args, EnvMap env = {}) {
  try {
    cluster_settings(parse(std::move(args)), loopback_host(std::move(env)));
  } catch (const common::UsageError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST_CASE("an IP:PORT master is hosted by the node with its address; N nodes are not elastic") {
  auto s = cluster_settings(parse({"--master=127.0.0.1:6000", "--nnodes=3", "--host=127.0.0.1", "x"}), loopback_host());
  REQUIRE(s);
  CHECK(s->master_ip == "127.0.0.1");
  CHECK(s->master_port == 6000);
  CHECK(s->etcd.empty());
  CHECK(s->host_master);
  CHECK(s->nnodes == 3);
  CHECK(s->min_nodes == 3);
  CHECK_FALSE(s->elastic());
  CHECK(s->master_name() == "the master 127.0.0.1:6000");
}

TEST_CASE("an etcd master lists its endpoints, no node hosts it, and MIN:MAX is elastic") {
  auto s = cluster_settings(parse({"--master=etcd://127.0.0.1:2379,127.0.0.2:2380", "--nnodes=2:4",
                                   "--elastic_timeout=7", "--host=127.0.0.3", "x"}),
                            loopback_host());
  REQUIRE(s);
  REQUIRE(s->etcd.size() == 2);
  CHECK(s->etcd[1].ip == "127.0.0.2");
  CHECK(s->etcd[1].port == 2380);
  CHECK_FALSE(s->host_master);
  CHECK(s->min_nodes == 2);
  CHECK(s->nnodes == 4);
  CHECK(s->elastic());
  CHECK(s->elastic_timeout == std::chrono::seconds(7));
  CHECK(s->master_name() == "etcd 127.0.0.1:2379,127.0.0.2:2380");
}

TEST_CASE("PADDLE_NNODES may be elastic too, and the scheduler's rank is not used then") {
  auto s = cluster_settings(parse({"--host=127.0.0.1", "x"}),
                            loopback_host({{"PADDLE_MASTER", "etcd://127.0.0.1:2379"}, {"PADDLE_NNODES", "1:3"},
                                           {"PADDLE_RANK", "2"}}));
  REQUIRE(s);
  CHECK(s->min_nodes == 1);
  CHECK(s->nnodes == 3);
  CHECK_FALSE(s->node_rank);
}

TEST_CASE("elastic input errors name the flag") {
  CHECK(settings_error({"--master=etcd://127.0.0.1:2379", "--nnodes=3:2", "x"}) == "--nnodes=3:2: MIN is above MAX");
  CHECK(settings_error({"--master=127.0.0.1:6000", "--nnodes=2:3", "x"}) ==
        "--nnodes=2:3 is elastic, which needs --master=etcd://HOST:PORT (not 127.0.0.1:6000)");
  CHECK(settings_error({"--master=etcd://127.0.0.1:2379", "--nnodes=1:2", "--rank=1", "x"}).find("drop --rank") !=
        std::string::npos);
  CHECK(settings_error({"--master=etcd://127.0.0.1:2379", "--nnodes=two", "x"}).starts_with("--nnodes=two"));
  CHECK(settings_error({"--master=etcd://127.0.0.1", "--nnodes=2", "x"}).starts_with("--master=etcd://127.0.0.1"));
}

}  // namespace
}  // namespace paddle::launcher
