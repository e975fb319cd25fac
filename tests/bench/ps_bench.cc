// ps_bench: parameter-server throughput over loopback. Run with paddle-launch
// (scripts/bench_ps.sh): the server holds a 64 MB dense table and a sparse table of dim 9,
// applying pushes as they arrive; each worker times sparse pull+push of batches of 10k and 1M
// random keys and dense pull and push of the whole 64 MB table; worker 0 prints.

#include <chrono>
#include <cstdio>
#include <fmt/format.h>
#include <random>
#include <vector>

#include "collective/rendezvous.h"
#include "common/heap.h"
#include "common/parse.h"
#include "ps/client.h"
#include "ps/server.h"
#include "ps/table_spec.h"
#include "runtime/distributed/topology.h"

using namespace paddle;
using Clock = std::chrono::steady_clock;

int main() {
  paddle::common::keep_freed_memory_in_heap();  // as train does
  auto topo = runtime::topology_from_environment(runtime::current_environment());
  constexpr size_t kDense = 16u << 20;  // floats: 64 MB
  constexpr size_t kDim = 9;
  ps::TableSpecs tables;
  tables.dense.push_back({"dense", kDense});
  tables.sparse.push_back({"sparse", kDim, /*seed=*/1});
  if (topo.is_server()) {
    auto [ip, port] = paddle::common::parse_endpoint(topo.current_endpoint, "this server's endpoint");
    ps::ServerOptions o;
    o.ip = ip;
    o.port = port;
    o.workers = topo.trainer_num;
    o.sync = false;
    ps::ParameterServer server(o, ps::build_server_tables(tables, o.server_index, o.server_count));
    server.run();
    return 0;
  }
  ps::PsClient client(topo.server_endpoints, tables, {});
  std::mt19937_64 rng(static_cast<uint64_t>(topo.trainer_id) + 1);
  const bool report = topo.trainer_id == 0;
  if (report) fmt::print("{} worker(s), 1 server\n", topo.trainer_num);
  for (size_t batch : {size_t{10000}, size_t{1000000}}) {
    std::vector<uint64_t> keys(batch);
    for (auto& k : keys) k = rng() % 10000000;
    std::vector<float> grads(batch * kDim, 0.001f);
    client.push_sparse(0, keys, grads);  // create the rows first
    const int rounds = batch > 100000 ? 3 : 30;
    auto start = Clock::now();
    for (int r = 0; r < rounds; ++r) {
      auto rows = client.pull_sparse(0, keys);
      client.push_sparse(0, keys, grads);
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count() / rounds;
    const double bytes = static_cast<double>(batch) * (2 * sizeof(uint64_t) + 2 * kDim * sizeof(float));
    if (report)
      fmt::print("sparse pull+push, {:>7} keys x dim {}: {:8.2f} ms  {:10.0f} keys/s  {:7.1f} MB/s (per worker)\n", batch,
                 kDim, seconds * 1e3, batch / seconds, bytes / seconds / 1e6);
  }
  std::vector<float> dense(kDense, 0.001f);
  client.push_dense(0, dense);
  auto start = Clock::now();
  const int rounds = 3;
  for (int r = 0; r < rounds; ++r) client.push_dense(0, dense);
  const double push = std::chrono::duration<double>(Clock::now() - start).count() / rounds;
  start = Clock::now();
  std::vector<float> pulled(kDense);  // as a trainer keeps its dense parameters from step to step
  for (int r = 0; r < rounds; ++r) client.pull_dense_into(0, pulled);
  const double pull = std::chrono::duration<double>(Clock::now() - start).count() / rounds;
  const double gigabytes = static_cast<double>(kDense * sizeof(float)) / 1e9;
  if (report)
    fmt::print("dense 64 MB: push {:.3f} GB/s, pull {:.3f} GB/s (per worker)\n", gigabytes / push, gigabytes / pull);
  client.stop_worker();
  return 0;
}
