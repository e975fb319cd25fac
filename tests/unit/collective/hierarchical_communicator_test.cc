#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <future>

#include "collective/hierarchical_communicator.h"
#include "collective/gloo_store.h"
#include "store/rendezvous_store.h"
#include "store/kv_store_server.h"

using namespace paddle::collective;
using namespace std::chrono_literals;

namespace {

// Runs `body(comm)` on one thread per rank, placed on nodes by `keys` (a host key per rank).
template <class Body>
void on_nodes(const std::vector<std::string>& keys, Body body) {
  const NodeMap nodes = NodeMap::from_keys(keys);
  const int world = static_cast<int>(keys.size());
  paddle::store::KvStoreServer server("127.0.0.1", 0);
  std::vector<std::future<void>> ranks;
  for (int r = 0; r < world; ++r)
    ranks.push_back(std::async(std::launch::async, [&, r] {
      paddle::store::RendezvousStore client("127.0.0.1", server.port(), 10s);
      GlooStore store(client);
      ShmOptions shm;
      shm.slot_bytes = 4096;
      shm.timeout = 20s;
      HierarchicalCommunicator comm(r, world, nodes, store, "127.0.0.1", shm);
      body(comm);
    }));
  for (auto& f : ranks) f.get();
}

// Not inlined, so that sums of its results are plain float adds, never fused multiply-adds.
[[gnu::noinline]] float value(int rank, size_t i) { return std::cos(static_cast<float>(i) * 0.11f + rank) * 100.0f * (rank + 1); }

}  // namespace

TEST_CASE("node map: ranks grouped by host key, nodes in order of their lowest rank") {
  const NodeMap map = NodeMap::from_keys({"b", "a", "b", "a", "c"});
  CHECK(map.nodes == std::vector<std::vector<int>>{{0, 2}, {1, 3}, {4}});
  CHECK(map.node_of(3) == 1);
  CHECK(map.index_on_node(2) == 1);
  CHECK_FALSE(map.even());
  CHECK(NodeMap::from_keys({"x", "y", "y", "x"}).even());
  CHECK(host_key("10.0.0.1") != host_key("10.0.0.2"));
  CHECK(host_key("10.0.0.1") == host_key("10.0.0.1"));
}

TEST_CASE("hierarchical: 2 nodes x 2 interleaved ranks agree on every collective, bit-identical") {
  const std::vector<std::string> keys{"n0", "n1", "n0", "n1"};
  for (size_t count : {size_t{1}, size_t{7}, size_t{5000}}) {
    CAPTURE(count);
    std::vector<std::vector<float>> sums(4);
    on_nodes(keys, [&](HierarchicalCommunicator& comm) {
      std::vector<float> data(count);
      for (size_t i = 0; i < count; ++i) data[i] = value(comm.rank(), i);
      comm.allreduce(data.data(), count, ReduceOp::kSum);
      sums[comm.rank()] = data;

      std::vector<float> mean(count, static_cast<float>(comm.rank()));
      comm.allreduce(mean.data(), count, ReduceOp::kAvg);
      CHECK(mean[count - 1] == 1.5f);

      for (int root : {0, 3}) {
        std::vector<float> b(count, comm.rank() == root ? 7.0f + root : -1.0f);
        comm.broadcast(b.data(), count, root);
        CHECK(std::all_of(b.begin(), b.end(), [&](float v) { return v == 7.0f + root; }));
      }
      std::vector<float> mine(count), all(4 * count);
      for (size_t i = 0; i < count; ++i) mine[i] = value(comm.rank(), i);
      comm.allgather(mine.data(), all.data(), count);
      for (int p = 0; p < 4; ++p)
        for (size_t i = 0; i < count; ++i) REQUIRE(all[p * count + i] == value(p, i));
      comm.barrier();
    });
    for (int r = 1; r < 4 && count > 0; ++r)  // memcmp takes no null pointer, which an empty vector may hold
      CHECK(std::memcmp(sums[r].data(), sums[0].data(), count * sizeof(float)) == 0);
    for (size_t i = 0; i < count; ++i) {
      const float exact = value(0, i) + value(1, i) + value(2, i) + value(3, i);
      REQUIRE(sums[0][i] == doctest::Approx(exact).scale(1000).epsilon(1e-6));  // values up to 1000
    }
  }
}
