// allreduce_bench: allreduce bus bandwidth over message sizes, through paddle-launch's
// collective stack (GlooCommunicator) and through raw gloo::AllreduceRing on its own context,
// on the same ranks. Start it with paddle-launch (scripts/bench_allreduce.sh); rank 0 prints.
//   allreduce_bench [--min-bytes 4096] [--max-bytes 67108864] [--seconds 0.5]

#include <gloo/allreduce_ring.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include <chrono>
#include <cstdlib>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "collective/gloo_communicator.h"
#include "collective/rendezvous.h"
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
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--min-bytes") min_bytes = std::stoull(argv[i + 1]);
    else if (a == "--max-bytes") max_bytes = std::stoull(argv[i + 1]);
    else if (a == "--seconds") seconds = std::stod(argv[i + 1]);
  }
  auto topo = runtime::topology_from_environment(runtime::current_environment());
  collective::RendezvousConfig config;
  config.rank = topo.trainer_id;
  config.endpoints = topo.trainer_endpoints;
  collective::Rendezvous rendezvous(config);
  auto [ip, port] = paddle::common::parse_endpoint(topo.current_endpoint, "PADDLE_CURRENT_ENDPOINT");
  collective::GlooCommunicator comm(topo.trainer_id, topo.trainer_num, rendezvous.store(), ip, config.timeout);

  gloo::transport::tcp::attr attr;
  attr.hostname = ip;
  auto raw = std::make_shared<gloo::rendezvous::Context>(topo.trainer_id, topo.trainer_num);
  gloo::rendezvous::PrefixStore prefixed("raw", rendezvous.store());
  auto device = gloo::transport::tcp::CreateDevice(attr);
  raw->connectFullMesh(prefixed, device);

  const int n = topo.trainer_num;
  const double bus_factor = 2.0 * (n - 1) / n;
  if (topo.trainer_id == 0)
    fmt::print("{:>10}  {:>12} {:>12}  {:>12} {:>12}  {:>7}\n", "bytes", "ours us", "ours GB/s", "raw gloo us",
               "raw GB/s", "ours/raw");
  for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 4) {
    const size_t count = bytes / sizeof(float);
    std::vector<float> data(count, 1.0f);
    double ours = time_per_call([&] { comm.allreduce(data.data(), count, collective::ReduceOp::kSum); }, seconds, comm);
    std::vector<float*> ptrs{data.data()};
    gloo::AllreduceRing<float> ring(raw, ptrs, static_cast<int>(count));
    double theirs = time_per_call([&] { ring.run(); }, seconds, comm);
    if (topo.trainer_id == 0)
      fmt::print("{:>10}  {:>12.1f} {:>12.3f}  {:>12.1f} {:>12.3f}  {:>7.2f}\n", bytes, ours * 1e6,
                 bytes * bus_factor / ours / 1e9, theirs * 1e6, bytes * bus_factor / theirs / 1e9, theirs / ours);
  }
  comm.barrier();
  return 0;
}
