// collective_probe: joins the collective job described by its environment (as the launcher sets
// it, or by hand), checks allreduce (sum and mean), broadcast, allgather and barrier against
// values every rank can compute, and exits 0 when all agree.
//   collective_probe [--die-rank R] [--die-after S]
// --die-rank makes rank R exit with code 17 after the rendezvous (and S seconds), so tests can
// check that the others fail naming it instead of hanging.

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <string>
#include <thread>
#include <vector>

#include "runtime/distributed/distributed_context.h"

using namespace paddle;

namespace {

void expect(bool ok, const std::string& what) {
  if (!ok) {
    fmt::print(stderr, "collective_probe: FAILED: {}\n", what);
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int die_rank = -1;
  double die_after = 0;
  double linger = 0;  // seconds to stay after the checks, holding rank 0's store open
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--die-rank") die_rank = std::atoi(argv[i + 1]);
    else if (a == "--die-after") die_after = std::atof(argv[i + 1]);
    else if (a == "--linger") linger = std::atof(argv[i + 1]);
  }
  try {
    runtime::Topology topo = runtime::topology_from_environment(runtime::current_environment());
    expect(topo.kind == runtime::JobKind::kCollective, "a collective environment");
    const auto env = runtime::current_environment();
    auto progress = common::ProgressPage::from_environment(env);
    auto ctx = runtime::DistributedContext::from_environment(env, *progress);
    collective::Communicator& comm = *ctx->communicator();
    const int rank = comm.rank(), size = comm.size();
    fmt::print("rank {} of {} joined ({})\n", rank, size, comm.backend());

    if (rank == die_rank) {
      std::this_thread::sleep_for(std::chrono::duration<double>(die_after));
      fmt::print(stderr, "collective_probe: rank {} exiting on purpose\n", rank);
      std::_Exit(17);
    }

    const size_t n = 1 << 16;
    std::vector<float> data(n);
    for (size_t i = 0; i < n; ++i) data[i] = static_cast<float>(rank + 1) * static_cast<float>(i % 7);
    comm.allreduce(data.data(), n, collective::ReduceOp::kSum);
    const float ranks_sum = size * (size + 1) / 2.0f;
    for (size_t i = 0; i < n; ++i) expect(data[i] == ranks_sum * static_cast<float>(i % 7), "allreduce sum");
    std::vector<float> mean(n, static_cast<float>(rank));
    comm.allreduce(mean.data(), n, collective::ReduceOp::kAvg);
    expect(std::fabs(mean[n - 1] - (size - 1) / 2.0f) < 1e-6f, "allreduce mean");

    std::vector<float> b(1000, static_cast<float>(rank == size - 1 ? 42 : -1));
    comm.broadcast(b.data(), b.size(), size - 1);
    expect(b[0] == 42 && b[999] == 42, "broadcast from the last rank");

    std::vector<float> mine(3, static_cast<float>(rank)), all(3 * size);
    comm.allgather(mine.data(), all.data(), 3);
    for (int r = 0; r < size; ++r) expect(all[3 * r] == r && all[3 * r + 2] == r, "allgather in rank order");

    comm.barrier();
    fmt::print("rank {}: allreduce, broadcast, allgather and barrier agree\n", rank);
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::duration<double>(linger));
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "collective_probe: {}\n", e.what());
    return 1;
  }
}
