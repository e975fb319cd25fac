#include <doctest/doctest.h>

#include <unistd.h>

#include <future>

#include "collective/communicator.h"
#include "collective/gloo_store.h"
#include "store/rendezvous_store.h"
#include "store/kv_store_server.h"
#include "collective/shm_segment.h"

using namespace paddle::collective;
using namespace std::chrono_literals;

TEST_CASE("a rank that cannot map the segment fails, and the creator fails naming it, leaving no name behind") {
  paddle::store::KvStoreServer server("127.0.0.1", 0);
  ShmSegmentConfig config;
  config.key_prefix = "seg";
  config.group_size = 2;
  config.job_id = "segment-test";
  config.timeout = 10s;
  auto creator = std::async(std::launch::async, [&] {
    paddle::store::RendezvousStore client("127.0.0.1", server.port(), 10s);
    GlooStore store(client);
    ShmSegment segment(config, store, 8192);
  });
  auto opener = std::async(std::launch::async, [&] {
    paddle::store::RendezvousStore client("127.0.0.1", server.port(), 10s);
    GlooStore store(client);
    ShmSegmentConfig mine = config;
    mine.index = 1;
    ShmSegment segment(mine, store, 4096);  // disagrees on the size
  });
  CHECK_THROWS_WITH_AS(opener.get(), doctest::Contains("has 8192 bytes, expected 4096"), CollectiveError);
  CHECK_THROWS_WITH_AS(creator.get(), doctest::Contains("rank 1 of the node: shared memory /paddle-segment-test-g0-"),
                       CollectiveError);
  paddle::store::RendezvousStore client("127.0.0.1", server.port(), 10s);
  GlooStore store(client);
  auto published = store.get("seg/name");
  CHECK(access(("/dev/shm" + std::string(published.begin(), published.end())).c_str(), F_OK) != 0);
}
