// allreduce_bench: allreduce latency and bus bandwidth over message sizes, on the same ranks of
// one node, through paddle-launch's shared-memory communicator (ShmCommunicator), a bucket it
// reduces where it lies (ShmReduceBuffer, what DataParallel's buckets are on one node), its Gloo
// communicator (GlooCommunicator, what PADDLE_COLLECTIVE_SHM=0 gives) and raw
// gloo::AllreduceRing on its own context; and, for scale, one thread's memcpy of the largest
// size. Start it with paddle-launch (scripts/bench_allreduce.sh); rank 0 prints.
//   allreduce_bench [--min-bytes 4096] [--max-bytes 67108864] [--seconds 0.5] [--slot-bytes N]

#include <gloo/allreduce_ring.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "collective/gloo_communicator.h"
#include "collective/rendezvous.h"
#include "collective/shm_communicator.h"
#include "common/parse.h"
#include "runtime/distributed/topology.h"

using namespace paddle;
using Clock = std::chrono::steady_clock;

namespace {

// Seconds per call of `op`, timed over at least `budget` seconds after two warm-up calls; the
// iteration count is agreed by rank 0 through a broadcast so every rank runs the same number.
template <typename Op>
double time_per_call(Op op, double budget, collective::Communicator& comm) {
  op();
  op();
  auto t0 = Clock::now();
  op();
  float iterations = static_cast<float>(std::max(3.0, budget / std::chrono::duration<double>(Clock::now() - t0).count()));
  comm.broadcast(&iterations, 1, 0);
  comm.barrier();
  auto start = Clock::now();
  for (int i = 0; i < static_cast<int>(iterations); ++i) op();
  return std::chrono::duration<double>(Clock::now() - start).count() / static_cast<int>(iterations);
}

}  // namespace

int main(int argc, char** argv) {
  size_t min_bytes = 4096, max_bytes = 64u << 20;
  double seconds = 0.5;
  collective::ShmOptions shm_options;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--min-bytes") min_bytes = std::stoull(argv[i + 1]);
    else if (a == "--max-bytes") max_bytes = std::stoull(argv[i + 1]);
    else if (a == "--seconds") seconds = std::stod(argv[i + 1]);
    else if (a == "--slot-bytes") shm_options.slot_bytes = std::stoull(argv[i + 1]);
  }
  auto topo = runtime::topology_from_environment(runtime::current_environment());
  if (topo.trainer_num < 2) {
    fmt::print(stderr, "allreduce_bench: needs 2 or more ranks, has {}\n", topo.trainer_num);
    return 2;
  }
  collective::RendezvousConfig config;
  config.rank = topo.trainer_id;
  config.endpoints = topo.trainer_endpoints;
  collective::Rendezvous rendezvous(config);
  auto [ip, port] = paddle::common::parse_endpoint(topo.current_endpoint, "PADDLE_CURRENT_ENDPOINT");
  collective::GlooCommunicator comm(topo.trainer_id, topo.trainer_num, rendezvous.gloo_store(), ip, config.timeout);
  shm_options.timeout = config.timeout;
  collective::ShmCommunicator shm(topo.trainer_id, topo.trainer_num, rendezvous.gloo_store(), shm_options);

  gloo::transport::tcp::attr attr;
  attr.hostname = ip;
  auto raw = std::make_shared<gloo::rendezvous::Context>(topo.trainer_id, topo.trainer_num);
  gloo::rendezvous::PrefixStore prefixed("raw", rendezvous.gloo_store());
  auto device = gloo::transport::tcp::CreateDevice(attr);
  raw->connectFullMesh(prefixed, device);

  const int n = topo.trainer_num;
  const double bus_factor = 2.0 * (n - 1) / n;
  if (topo.trainer_id == 0)
    fmt::print("{:>10}  {:>9} {:>8}  {:>9} {:>8}  {:>9} {:>8}  {:>9} {:>8}  {:>8}\n", "bytes", "shm us", "GB/s",
               "bucket us", "GB/s", "gloo us", "GB/s", "raw us", "GB/s", "shm/raw");
  auto bus = [&](size_t bytes, double seconds) { return bytes * bus_factor / seconds / 1e9; };
  double largest_bucket_bus = 0;
  size_t largest = 0;
  for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 4) {
    const size_t count = bytes / sizeof(float);
    std::vector<float> data(count, 1.0f);
    double ours_shm = time_per_call([&] { shm.allreduce(data.data(), count, collective::ReduceOp::kSum); }, seconds, comm);
    auto bucket = shm.reduce_buffer(count);
    std::fill_n(bucket->data(), count, 1.0f);
    double ours_bucket = time_per_call([&] { bucket->allreduce(collective::ReduceOp::kSum); }, seconds, comm);
    bucket.reset();
    largest_bucket_bus = bus(bytes, ours_bucket);
    largest = bytes;
    double ours_gloo = time_per_call([&] { comm.allreduce(data.data(), count, collective::ReduceOp::kSum); }, seconds, comm);
    std::vector<float*> ptrs{data.data()};
    gloo::AllreduceRing<float> ring(raw, ptrs, static_cast<int>(count));
    double theirs = time_per_call([&] { ring.run(); }, seconds, comm);
    if (topo.trainer_id == 0)
      fmt::print("{:>10}  {:>9.1f} {:>8.3f}  {:>9.1f} {:>8.3f}  {:>9.1f} {:>8.3f}  {:>9.1f} {:>8.3f}  {:>8.2f}\n", bytes,
                 ours_shm * 1e6, bus(bytes, ours_shm), ours_bucket * 1e6, bus(bytes, ours_bucket), ours_gloo * 1e6,
                 bus(bytes, ours_gloo), theirs * 1e6, bus(bytes, theirs), theirs / ours_shm);
  }
  if (topo.trainer_id == 0 && largest > 0) {  // the other ranks wait at the barrier, off the memory bus
    std::vector<char> from(largest, 1), to(largest, 0);
    std::memcpy(to.data(), from.data(), largest);  // every page touched before the timing
    int copies = 0;
    const auto start = Clock::now();
    do {
      std::memcpy(to.data(), from.data(), largest);
      asm volatile("" : : "r"(to.data()) : "memory");  // the copy counts as read: never dropped
      ++copies;
    } while (std::chrono::duration<double>(Clock::now() - start).count() < seconds);
    const double copy = std::chrono::duration<double>(Clock::now() - start).count() / copies;
    fmt::print("memcpy of {} bytes, one thread: {:.3f} GB/s; the bucket's bus bandwidth at that size is {:.2f}x it\n",
               largest, largest / copy / 1e9, largest_bucket_bus / (largest / copy / 1e9));
  }
  comm.barrier();
  return 0;
}
