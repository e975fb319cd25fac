#include <doctest/doctest.h>

#include <thread>

#include "store/rendezvous_store.h"
#include "store/kv_store_server.h"
#include "store/liveness.h"
#include "common/error.h"

using namespace paddle::store;
using namespace std::chrono_literals;

TEST_CASE("the store keeps Gloo's contract: set, get, wait") {
  KvStoreServer server("127.0.0.1", 0);
  RendezvousStore store("127.0.0.1", server.port(), 5s);
  store.set("a/b c", {'x', '\0', 'y'});  // any key, any bytes
  CHECK(store.get("a/b c") == std::vector<char>{'x', '\0', 'y'});
  CHECK(store.try_get("absent") == std::nullopt);
  CHECK(store.try_put("k", "v"));
  CHECK(store.try_get("k") == "v");

  std::thread late([&] {
    std::this_thread::sleep_for(100ms);
    RendezvousStore other("127.0.0.1", server.port(), 5s);
    other.set("late", {'1'});
  });
  store.wait({"k", "late"});  // blocks until the other writer's key appears
  CHECK(store.get("late") == std::vector<char>{'1'});
  late.join();
}

TEST_CASE("a key that never appears times out naming it and the store") {
  KvStoreServer server("127.0.0.1", 0);
  RendezvousStore store("127.0.0.1", server.port(), 5s);
  CHECK_THROWS_WITH_AS(store.wait({"never"}, 100ms), doctest::Contains("key 'never' did not appear"),
                       paddle::common::TimeoutError);
}

TEST_CASE("a store that is not up: single attempts say so, blocking calls time out") {
  int port = 0;
  { KvStoreServer gone("127.0.0.1", 0); port = gone.port(); }
  RendezvousStore store("127.0.0.1", port, 200ms);
  CHECK_FALSE(store.try_put("k", "v"));
  CHECK_THROWS_AS(store.try_get("k"), paddle::common::PeerError);
  CHECK_THROWS_WITH_AS(store.set("k", {'v'}), doctest::Contains("unreachable"), paddle::common::TimeoutError);
}

TEST_CASE("a store with the job's token serves only peers that prove it") {
  const paddle::common::JobToken token("secret-of-the-job");
  KvStoreServer server("127.0.0.1", 0, token);
  RendezvousStore member("127.0.0.1", server.port(), 5s, 5s, token);
  CHECK(member.try_put("k", "v"));
  CHECK(member.try_get("k") == "v");
  Liveness liveness("127.0.0.1", server.port(), token);
  auto presence = liveness.announce("0");
  CHECK(liveness.lost() == std::vector<std::string>{});

  RendezvousStore stranger("127.0.0.1", server.port(), 5s, 5s);
  CHECK_THROWS_WITH_AS(stranger.try_get("k"), doctest::Contains("refused this process: it has no job token"),
                       paddle::common::PeerError);
  RendezvousStore impostor("127.0.0.1", server.port(), 5s, 5s, paddle::common::JobToken("guess"));
  CHECK_THROWS_WITH_AS(impostor.try_put("k", "x"), doctest::Contains("its job token is not the job's"),
                       paddle::common::PeerError);
  CHECK_THROWS_AS(Liveness("127.0.0.1", server.port()).announce("1"), paddle::common::PeerError);
  CHECK(member.try_get("k") == "v");  // nothing the strangers sent reached the store
}
