#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "store/kv_store_server.h"
#include "collective/rendezvous.h"
#include "common/error.h"

using namespace paddle::collective;
using namespace std::chrono_literals;

TEST_CASE("a rank whose token rank 0's store refuses fails at once, naming the store") {
  paddle::store::KvStoreServer store("127.0.0.1", 0, paddle::common::JobToken("rank 0's job"));
  const std::string endpoint = "127.0.0.1:" + std::to_string(store.port());
  RendezvousConfig config;
  config.rank = 1;
  config.endpoints = {endpoint, "127.0.0.1:1"};
  config.timeout = 20s;
  config.token = paddle::common::JobToken("another job");
  const auto started = std::chrono::steady_clock::now();
  const std::string expected = "key-value store " + endpoint + " refused this process";
  CHECK_THROWS_WITH_AS(Rendezvous{config}, doctest::Contains(expected.c_str()), paddle::common::PeerError);
  CHECK(std::chrono::steady_clock::now() - started < 5s);  // not after the rendezvous timeout
}
