#include <doctest/doctest.h>

#include <future>
#include <numeric>
#include <thread>

#include "collective/gloo_communicator.h"
#include "collective/gloo_store.h"
#include "store/rendezvous_store.h"
#include "store/kv_store_server.h"

using namespace paddle::collective;
using namespace std::chrono_literals;

namespace {

// Runs `body(comm)` on `world` threads, each a rank with its own communicator over one store.
template <class Body>
void on_ranks(int world, Body body) {
  paddle::store::KvStoreServer server("127.0.0.1", 0);
  std::vector<std::future<void>> ranks;
  for (int r = 0; r < world; ++r)
    ranks.push_back(std::async(std::launch::async, [&, r] {
      paddle::store::RendezvousStore client("127.0.0.1", server.port(), 10s);
      GlooStore store(client);
      GlooCommunicator comm(r, world, store, "127.0.0.1", 10s);
      body(comm);
    }));
  for (auto& f : ranks) f.get();  // rethrows a rank's failure
}

}  // namespace

TEST_CASE("two ranks: allreduce sums and averages small and large buffers, broadcast and allgather") {
  on_ranks(2, [](GlooCommunicator& comm) {
    const float me = static_cast<float>(comm.rank() + 1);
    std::vector<float> small(3, me);
    comm.allreduce(small.data(), small.size(), ReduceOp::kSum);
    CHECK(small == std::vector<float>(3, 3.0f));

    std::vector<float> large(1 << 19);  // 2 MB: the functional path
    std::iota(large.begin(), large.end(), me);
    comm.allreduce(large.data(), large.size(), ReduceOp::kAvg);
    CHECK(large[0] == doctest::Approx(1.5));
    CHECK(large[1000] == doctest::Approx(1001.5));

    std::vector<float> value{me * 10};
    comm.broadcast(value.data(), 1, 1);
    CHECK(value[0] == 20.0f);

    std::vector<float> all(2);
    comm.allgather(&me, all.data(), 1);
    CHECK(all == std::vector<float>{1.0f, 2.0f});
    comm.barrier();
  });
}
