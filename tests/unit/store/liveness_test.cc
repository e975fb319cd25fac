#include <doctest/doctest.h>

#include <thread>

#include "store/kv_store_server.h"
#include "store/liveness.h"
#include "common/error.h"
#include "common/wait.h"

using namespace paddle::store;
using namespace std::chrono_literals;

TEST_CASE("a rank is present while its connection is open and lost once it closes") {
  KvStoreServer server("127.0.0.1", 0);
  Liveness liveness("127.0.0.1", server.port());
  auto zero = liveness.announce("0");
  auto one = liveness.announce("1");
  auto two = liveness.announce("2");
  CHECK(liveness.lost() == std::vector<std::string>{});
  one.reset();
  two.reset();
  std::optional<std::vector<std::string>> lost;
  CHECK(paddle::common::wait_until(2s, [&] {
    lost = liveness.lost();
    return lost && lost->size() == 2;
  }));
  CHECK(*lost == std::vector<std::string>{"1", "2"});
}

TEST_CASE("with the store gone there is no answer, not an empty one") {
  auto server = std::make_unique<KvStoreServer>("127.0.0.1", 0);
  Liveness liveness("127.0.0.1", server->port());
  server.reset();
  CHECK_FALSE(liveness.lost().has_value());
  CHECK_THROWS_AS(liveness.announce("0"), paddle::common::PeerError);
}
