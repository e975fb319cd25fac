// fleet_ps_example: parameter-server training in a few lines of the Fleet API. Fits a linear
// model with a per-id bias (a dense table of weights, a sparse table of biases keyed by id) to
// seeded data; run it with `paddle-launch --server_num=1 --worker_num=2 fleet_ps_example`.
//   fleet_ps_example [STEPS]

#include <cstdio>
#include <random>
#include <vector>

#include "common/parse.h"
#include "runtime/distributed/fleet.h"

using namespace paddle;

namespace {

constexpr int kFeatures = 8, kIds = 50, kBatch = 32;

struct Sample {
  float x[kFeatures];
  uint64_t id;
  float y;
};

// y = sum_j (j+1)/10 * x_j + (id % 5) / 5: what training should find.
std::vector<Sample> make_data(uint32_t seed, size_t count) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<Sample> data(count);
  for (auto& s : data) {
    s.y = 0;
    for (int j = 0; j < kFeatures; ++j) s.y += static_cast<float>(j + 1) / 10 * (s.x[j] = normal(rng));
    s.id = rng() % kIds;
    s.y += static_cast<float>(s.id % 5) / 5;
  }
  return data;
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? static_cast<int>(common::parse_int(argv[1], "STEPS", 1)) : 200;
  auto fleet = fleet::Fleet::init(/*is_collective=*/false);  // sync: a_sync off
  ps::TableSpecs tables;
  tables.dense.push_back({"weights", kFeatures});
  tables.sparse.push_back({"bias", 1, /*seed=*/3});
  tables.learning_rate = 0.1f;
  if (fleet->is_server()) {
    fleet->init_server(tables);
    fleet->run_server();
    return 0;
  }
  fleet->init_worker(tables);
  ps::ParameterStore& store = fleet->parameter_store();
  if (fleet->is_first_worker()) store.init_dense(0, std::vector<float>(kFeatures, 0.0f));
  fleet->ps_barrier();
  const auto data = make_data(100 + static_cast<uint32_t>(fleet->worker_index()), static_cast<size_t>(steps) * kBatch);
  double loss = 0;
  for (int step = 0; step < steps; ++step) {
    std::vector<float> w = store.pull_dense(0), dw(kFeatures, 0.0f);
    std::vector<uint64_t> ids;
    for (int i = 0; i < kBatch; ++i) ids.push_back(data[step * kBatch + i].id);
    std::vector<float> bias = store.pull_sparse(0, ids), dbias(kBatch);
    loss = 0;
    for (int i = 0; i < kBatch; ++i) {
      const Sample& s = data[step * kBatch + i];
      float prediction = bias[i];
      for (int j = 0; j < kFeatures; ++j) prediction += w[j] * s.x[j];
      const float error = prediction - s.y;
      loss += error * error / kBatch;
      for (int j = 0; j < kFeatures; ++j) dw[j] += 2 * error * s.x[j] / kBatch;
      dbias[i] = 2 * error / kBatch;
    }
    store.push_dense(0, dw);
    store.push_sparse(0, ids, dbias);
    fleet->ps_barrier();
  }
  if (fleet->is_first_worker()) std::printf("final loss %.4f on %d workers\n", loss, fleet->worker_num());
  fleet->stop_worker();
  return 0;
}
