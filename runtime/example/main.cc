// fleet_example: a data-parallel training program in a few lines of the Fleet API. Trains a
// small CNN on Fashion-MNIST; run it with `paddle-launch --nproc_per_node=2 fleet_example`.
//   fleet_example [DATA_DIR] [TRAIN_SAMPLES] [EPOCHS]

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>

#include "common/parse.h"
#include "runtime/data/batch_loader.h"
#include "runtime/data/data_sources.h"
#include "runtime/distributed/fleet.h"
#include "runtime/nn/layers.h"
#include "runtime/nn/loss.h"
#include "runtime/nn/metrics.h"

using namespace paddle;

int main(int argc, char** argv) {
  const std::string data_dir = argc > 1 ? argv[1] : "/usr/share/datasets/fashion-mnist";
  const size_t samples = argc > 2 ? static_cast<size_t>(common::parse_int(argv[2], "SAMPLES", 0)) : 0;
  const int epochs = argc > 3 ? static_cast<int>(common::parse_int(argv[3], "EPOCHS", 1)) : 1;

  auto fleet = fleet::Fleet::init(/*is_collective=*/true);
  auto data = runtime::load_fashion_mnist(data_dir);
  data.train.truncate(samples);

  std::mt19937 rng(1);
  runtime::Sequential net;
  net.add(std::make_unique<runtime::Conv2D>(1, 8, 3, 1, 1, rng, "conv"))
      .add(std::make_unique<runtime::ReLU>())
      .add(std::make_unique<runtime::MaxPool2D>(2, 2))
      .add(std::make_unique<runtime::Flatten>())
      .add(std::make_unique<runtime::Linear>(8 * 14 * 14, 10, rng, "fc"));
  auto model = fleet->distributed_model(net);
  auto optimizer = fleet->distributed_optimizer(runtime::make_optimizer({runtime::OptimizerKind::kMomentum}), model);

  runtime::ShardSpec shard{32, fleet->worker_index(), fleet->worker_num(), 7, true, 2};
  for (int epoch = 0; epoch < epochs; ++epoch) {
    runtime::BatchLoader loader(data.train, shard, epoch);
    float loss = 0;
    while (auto batch = loader.next()) {
      auto out = model.forward(batch->inputs.to(fleet->execution().device()));
      auto result = runtime::softmax_cross_entropy(out, batch->labels);
      model.backward(result.grad);
      optimizer.step(0.01f);
      optimizer.clear_grad();
      loss = fleet->average(result.loss);
    }
    if (fleet->is_first_worker()) std::printf("epoch %d: loss %.4f on %d workers\n", epoch, loss, fleet->worker_num());
  }
  fleet->barrier();
  return 0;
}
