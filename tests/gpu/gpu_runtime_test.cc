// The runtime on a CUDA device against the same runtime on the CPU, in one file so that a GPU
// machine's short loan runs it in one call: tensors, every layer's
// forward and backward, the recommender and its own layers, the optimizers, a model trained for a
// few steps, checkpoints, and data parallelism over a one-rank NCCL communicator (device buckets,
// events, in-place reduction).
// Without a CUDA device the whole test reports a skip (exit 77).

#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <random>
#include <unistd.h>

#include "collective/gloo_store.h"
#include "store/rendezvous_store.h"
#include "store/kv_store_server.h"
#include "collective/nccl_communicator.h"
#include "kernels/context.h"
#include "runtime/distributed/data_parallel.h"
#include "runtime/models/recommender.h"
#include "runtime/nn/checkpoint.h"
#include "runtime/nn/layers.h"
#include "runtime/nn/loss.h"
#include "runtime/nn/loss_scaler.h"
#include "runtime/nn/optimizer.h"
#include "runtime/nn/residual.h"
#include "runtime/nn/tanh.h"
#include "tests/unit/runtime/models/recommender_fixture.h"

using namespace paddle::runtime;
using paddle::runtime::testing::recommender_ids;
using paddle::runtime::testing::small_recommender_config;

namespace {

const Device kGpu = Device::cuda(0);

Tensor random_tensor(std::vector<int64_t> shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  Tensor t(std::move(shape));
  for (auto& v : t.values()) v = d(rng);
  return t;
}

void expect_close(const std::vector<float>& gpu, const std::vector<float>& cpu, double tolerance, const char* what) {
  REQUIRE(gpu.size() == cpu.size());
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    const double error = std::abs(gpu[i] - cpu[i]) / std::max(1.0, std::abs(static_cast<double>(cpu[i])));
    if (error > worst) worst = error, at = i;
  }
  INFO(what << ": worst relative error " << worst << " at " << at);
  CHECK(worst <= tolerance);
}

// Builds the same layer twice (same seed), runs one on the CPU and one on the GPU through
// forward and backward, and compares outputs, input gradients and parameter gradients.
void compare_layer(const std::function<LayerPtr()>& make, const Tensor& x, bool training = true,
                   double tolerance = 1e-4) {
  Execution gpu(kGpu);
  LayerPtr on_cpu = make(), on_gpu = make();
  on_gpu->place(gpu);
  for (Parameter* p : on_gpu->parameters()) CHECK(p->value.on_cuda());
  const Tensor y_cpu = on_cpu->forward(x, training);
  const Tensor y_gpu = on_gpu->forward(x.to(kGpu), training);
  CHECK(y_gpu.on_cuda());
  CHECK(y_gpu.shape == y_cpu.shape);
  expect_close(y_gpu.to_vector(), y_cpu.to_vector(), tolerance, "forward");
  if (!training) return;
  const Tensor dy = random_tensor(y_cpu.shape, 5);
  const Tensor dx_cpu = on_cpu->backward(dy);
  const Tensor dx_gpu = on_gpu->backward(dy.to(kGpu));
  expect_close(dx_gpu.to_vector(), dx_cpu.to_vector(), tolerance, "input gradient");
  auto pc = on_cpu->parameters(), pg = on_gpu->parameters();
  for (size_t i = 0; i < pc.size(); ++i) {
    INFO(pc[i]->name);
    expect_close(pg[i]->grad.to_vector(), pc[i]->grad.to_vector(), tolerance, "parameter gradient");
  }
}

}  // namespace

TEST_CASE("tensors move between host and device, and host views refuse device memory") {
  const Tensor host = random_tensor({3, 5}, 1);
  const Tensor device = host.to(kGpu);
  CHECK(device.on_cuda());
  CHECK(device.describe() == "float32[3,5] on gpu:0");
  CHECK(device.to(Device::cpu()).to_vector() == host.to_vector());
  Tensor copy = device;  // a device copy, independent of the original
  copy.zero();
  CHECK(device.to_vector() == host.to_vector());
  CHECK_THROWS_AS(device.values(), std::logic_error);
  const std::vector<int64_t> ids{3, -1, 1ll << 40};
  const Tensor id_tensor = Tensor::from_ids({3}, ids, kGpu);
  const Tensor ids_back = id_tensor.to(Device::cpu());
  CHECK(std::vector<int64_t>(ids_back.ids().begin(), ids_back.ids().end()) == ids);
  CHECK(Tensor({4}, 2.5f, kGpu).to_vector() == std::vector<float>(4, 2.5f));
}

TEST_CASE("every layer computes on the GPU what it computes on the CPU") {
  SUBCASE("Linear") {
    compare_layer([] { std::mt19937 r(1); return std::make_unique<Linear>(7, 5, r, "fc"); }, random_tensor({4, 7}, 2));
  }
  SUBCASE("Conv2D with bias, stride and padding") {
    compare_layer([] { std::mt19937 r(1); return std::make_unique<Conv2D>(3, 6, 3, 2, 1, r, "conv"); },
                  random_tensor({2, 3, 9, 9}, 2));
  }
  SUBCASE("Conv2D without bias") {
    compare_layer([] { std::mt19937 r(1); return std::make_unique<Conv2D>(4, 8, 1, 1, 0, r, "conv", false); },
                  random_tensor({2, 4, 5, 5}, 2));
  }
  SUBCASE("ReLU") {
    compare_layer([] { return std::make_unique<ReLU>(); }, random_tensor({3, 40}, 2));
  }
  SUBCASE("Tanh") {
    compare_layer([] { return std::make_unique<Tanh>(); }, random_tensor({3, 40}, 2));
  }
  SUBCASE("MaxPool2D with padding") {
    compare_layer([] { return std::make_unique<MaxPool2D>(3, 2, 1); }, random_tensor({2, 3, 8, 8}, 2));
  }
  SUBCASE("AvgPool2D, windowed and global") {
    compare_layer([] { return std::make_unique<AvgPool2D>(2, 2); }, random_tensor({2, 3, 8, 8}, 2));
    compare_layer([] { return std::make_unique<AvgPool2D>(0, 0); }, random_tensor({2, 3, 7, 7}, 2));
  }
  SUBCASE("Flatten") {
    compare_layer([] { return std::make_unique<Flatten>(); }, random_tensor({2, 3, 4, 4}, 2));
  }
  SUBCASE("Dropout draws the same mask on both devices") {
    compare_layer([] { return std::make_unique<Dropout>(0.3f, 9); }, random_tensor({4, 50}, 2));
    compare_layer([] { return std::make_unique<Dropout>(0.3f, 9); }, random_tensor({4, 50}, 2), false);
  }
  SUBCASE("BatchNorm2D in training, and in evaluation after it") {
    compare_layer([] { return std::make_unique<BatchNorm2D>(4, "bn"); }, random_tensor({3, 4, 5, 5}, 2), true, 1e-3);
    Execution gpu(kGpu);
    BatchNorm2D cpu_bn(4, "bn"), gpu_bn(4, "bn");
    gpu_bn.place(gpu);
    const Tensor x = random_tensor({8, 4, 6, 6}, 3);
    cpu_bn.forward(x, true);
    gpu_bn.forward(x.to(kGpu), true);
    // cuDNN moves the running variance by the unbiased batch variance, the CPU by the biased one.
    const double n = 8 * 6 * 6;
    auto cpu_var = cpu_bn.buffers()[1].second->to_vector();
    auto gpu_var = gpu_bn.buffers()[1].second->to_vector();
    for (size_t c = 0; c < cpu_var.size(); ++c) {
      const double batch_var = (cpu_var[c] - 0.9) / 0.1;
      CHECK(gpu_var[c] == doctest::Approx(0.9 + 0.1 * batch_var * n / (n - 1)).epsilon(1e-4));
    }
    expect_close(gpu_bn.buffers()[0].second->to_vector(), cpu_bn.buffers()[0].second->to_vector(), 1e-5, "mean");
    *gpu_bn.buffers()[1].second = cpu_bn.buffers()[1].second->to(kGpu);
    expect_close(gpu_bn.forward(x.to(kGpu), false).to_vector(), cpu_bn.forward(x, false).to_vector(), 1e-4,
                 "evaluation");
  }
  SUBCASE("Embedding, and an id outside the vocabulary") {
    const std::vector<int64_t> ids{1, 2, 9, 0, 2, 5};
    compare_layer([] { std::mt19937 r(1); return std::make_unique<Embedding>(10, 4, r, "emb"); },
                  Tensor::from_ids({2, 3}, ids));
    Execution gpu(kGpu);
    std::mt19937 r(1);
    Embedding e(10, 4, r, "emb");
    e.place(gpu);
    const std::vector<int64_t> bad{1, 10};
    CHECK_THROWS_WITH_AS(e.forward(Tensor::from_ids({1, 2}, bad, kGpu), true),
                         "Embedding: id 10 outside the vocabulary of 10", std::out_of_range);
  }
  SUBCASE("Residual with a projection shortcut") {
    auto make = [] {
      std::mt19937 r(1);
      Sequential branch, shortcut;
      branch.add(std::make_unique<Conv2D>(3, 6, 3, 2, 1, r, "b.conv")).add(std::make_unique<BatchNorm2D>(6, "b.bn"));
      shortcut.add(std::make_unique<Conv2D>(3, 6, 1, 2, 0, r, "s.conv", false));
      return std::make_unique<Residual>(std::move(branch), std::move(shortcut));
    };
    compare_layer(make, random_tensor({2, 3, 8, 8}, 2), true, 1e-3);
  }
}

TEST_CASE("a layer refuses an input on another device") {
  Execution gpu(kGpu);
  std::mt19937 r(1);
  Linear fc(3, 2, r, "fc");
  fc.place(gpu);
  CHECK_THROWS_WITH_AS(fc.forward(Tensor({1, 3}), true), "Linear on gpu:0 got an input float32[1,3] on cpu",
                       std::invalid_argument);
}

TEST_CASE("the recommender's layers and the whole recommender compute on the GPU what they compute on the CPU") {
  SUBCASE("BagOfEmbeddings, with a row of padding only") {
    compare_layer([] { std::mt19937 r(1); return std::make_unique<BagOfEmbeddings>(7, 4, r, "bag"); },
                  Tensor::from_values({3, 3}, std::vector<float>{1, 3, 0, 0, 0, 0, 6, 6, 2}));
  }
  SUBCASE("CosineSimilarity, with a zero row") {
    Execution gpu(kGpu);
    CosineSimilarity on_cpu(5.0f), on_gpu(5.0f);
    on_gpu.place(gpu);
    Tensor a = random_tensor({6, 9}, 2);
    const Tensor b = random_tensor({6, 9}, 3), dy = random_tensor({6, 1}, 4);
    for (int j = 0; j < 9; ++j) a.values()[2 * 9 + j] = 0;
    const Tensor y_cpu = on_cpu.forward(a, b);
    const Tensor y_gpu = on_gpu.forward(a.to(kGpu), b.to(kGpu));
    CHECK(y_gpu.on_cuda());
    CHECK(y_cpu.values()[2] == 0.0f);
    expect_close(y_gpu.to_vector(), y_cpu.to_vector(), 1e-5, "cosine");
    auto [da_gpu, db_gpu] = on_gpu.backward(dy.to(kGpu));
    auto [da_cpu, db_cpu] = on_cpu.backward(dy);
    expect_close(da_gpu.to_vector(), da_cpu.to_vector(), 1e-4, "da");
    expect_close(db_gpu.to_vector(), db_cpu.to_vector(), 1e-4, "db");
    CHECK_THROWS_AS(on_gpu.forward(a, b), std::invalid_argument);
  }
  SUBCASE("Recommender, placed on the GPU") {
    compare_layer([] { std::mt19937 r(5); return std::make_unique<Recommender>(small_recommender_config(), r); },
                  recommender_ids(), true, 1e-3);
  }
}

TEST_CASE("optimizers update on the GPU as on the CPU") {
  for (const char* type : {"sgd", "momentum", "adam", "adagrad"}) {
    INFO(type);
    OptimizerConfig config;
    config.kind = parse_optimizer_kind(type);
    config.weight_decay = 1e-3f;
    Execution gpu(kGpu);
    Parameter on_cpu("w", {64}), on_gpu("w", {64});
    on_cpu.value = random_tensor({64}, 1);
    on_gpu.value = on_cpu.value.to(kGpu);
    on_gpu.grad = on_gpu.grad.to(kGpu);
    auto cpu_opt = make_optimizer(config), gpu_opt = make_optimizer(config);
    gpu_opt->place(gpu);
    for (unsigned step = 0; step < 5; ++step) {
      on_cpu.grad = random_tensor({64}, 10 + step);
      on_gpu.grad = on_cpu.grad.to(kGpu);
      cpu_opt->step({&on_cpu}, 0.05f);
      gpu_opt->step({&on_gpu}, 0.05f);
    }
    expect_close(on_gpu.value.to_vector(), on_cpu.value.to_vector(), 1e-5, type);
    for (auto& [name, t] : cpu_opt->state()) expect_close(gpu_opt->state().at(name).to_vector(), t.to_vector(), 1e-5, type);
  }
}

namespace {

Sequential small_cnn() {
  std::mt19937 r(3);
  Sequential net;
  net.add(std::make_unique<Conv2D>(1, 4, 3, 1, 1, r, "conv1"))
      .add(std::make_unique<BatchNorm2D>(4, "bn1"))
      .add(std::make_unique<ReLU>())
      .add(std::make_unique<MaxPool2D>(2, 2))
      .add(std::make_unique<Flatten>())
      .add(std::make_unique<Linear>(4 * 7 * 7, 10, r, "fc"));
  return net;
}

// Ten SGD steps on fixed random batches; returns the loss of each step.
std::vector<float> train_steps(Sequential& net, Optimizer& optimizer, const Device& device,
                               DataParallel* parallel = nullptr) {
  std::vector<float> losses;
  for (unsigned step = 0; step < 10; ++step) {
    std::vector<int64_t> labels;
    for (int i = 0; i < 16; ++i) labels.push_back((i * 7 + step) % 10);
    net.zero_grad();
    Tensor out = net.forward(random_tensor({16, 1, 14, 14}, 100 + step).to(device), true);
    LossResult loss = softmax_cross_entropy(out, labels);
    net.backward(loss.grad);
    if (parallel != nullptr) parallel->finish_step();
    optimizer.step(net.parameters(), 0.1f);
    losses.push_back(loss.loss);
  }
  return losses;
}

}  // namespace

TEST_CASE("a small CNN trains to the same parameters on the GPU, and its checkpoint loads on the CPU") {
  Sequential cpu_net = small_cnn(), gpu_net = small_cnn();
  Execution gpu(kGpu);
  gpu_net.place(gpu);
  auto cpu_opt = make_optimizer(OptimizerConfig{OptimizerKind::kMomentum}), gpu_opt = make_optimizer(OptimizerConfig{OptimizerKind::kMomentum});
  gpu_opt->place(gpu);
  const auto cpu_losses = train_steps(cpu_net, *cpu_opt, Device::cpu());
  const auto gpu_losses = train_steps(gpu_net, *gpu_opt, kGpu);
  expect_close(gpu_losses, cpu_losses, 1e-3, "losses");
  CHECK(gpu_losses.back() < gpu_losses.front());
  auto pc = cpu_net.parameters(), pg = gpu_net.parameters();
  for (size_t i = 0; i < pc.size(); ++i) expect_close(pg[i]->value.to_vector(), pc[i]->value.to_vector(), 1e-3, "params");

  const auto dir = std::filesystem::temp_directory_path() / ("gpu-ckpt-" + std::to_string(::getpid()));
  save_checkpoint(dir.string(), {1, 10}, gpu_net, *gpu_opt);
  Sequential restored = small_cnn();
  auto restored_opt = make_optimizer(OptimizerConfig{OptimizerKind::kMomentum});
  REQUIRE(load_latest_checkpoint(dir.string(), restored, *restored_opt));
  for (size_t i = 0; i < pg.size(); ++i)
    CHECK(restored.parameters()[i]->value.to_vector() == pg[i]->value.to_vector());
  for (auto& [name, t] : gpu_opt->state()) CHECK(restored_opt->state().at(name).to_vector() == t.to_vector());
  std::filesystem::remove_all(dir);
}

TEST_CASE("Linear under O1 autocast computes on the GPU what its CPU twin computes, float16 and bfloat16") {
  // The twin rounds the same operands; the GEMMs differ only in summation order (float32).
  for (auto half : {paddle::kernels::DType::kFloat16, paddle::kernels::DType::kBFloat16}) {
    Execution cpu(Device::cpu()), gpu(kGpu);
    cpu.set_matmul_autocast(half);
    gpu.set_matmul_autocast(half);
    std::mt19937 a(21), b(21);
    Linear on_cpu(64, 48, a, "fc"), on_gpu(64, 48, b, "fc");
    on_cpu.place(cpu);
    on_gpu.place(gpu);
    const Tensor x = random_tensor({32, 64}, 44), dy = random_tensor({32, 48}, 45);
    expect_close(on_gpu.forward(x.to(kGpu), true).to_vector(), on_cpu.forward(x, true).to_vector(), 1e-4, "forward");
    expect_close(on_gpu.backward(dy.to(kGpu)).to_vector(), on_cpu.backward(dy).to_vector(), 1e-4, "input gradient");
    expect_close(on_gpu.parameters()[0]->grad.to_vector(), on_cpu.parameters()[0]->grad.to_vector(), 1e-4,
                 "weight gradient");
  }
}

TEST_CASE("Conv2D under O1 autocast computes on the GPU what its CPU twin computes, float16 and bfloat16") {
  // Both round inputs and results to 16 bits and sum in float32 in different orders, so a value may
  // differ by an ulp or two of the 16-bit type: 2^-10 relative in float16, 2^-7 in bfloat16.
  for (auto half : {paddle::kernels::DType::kFloat16, paddle::kernels::DType::kBFloat16}) {
    const double tolerance = half == paddle::kernels::DType::kFloat16 ? 4e-3 : 3e-2;
    Execution cpu(Device::cpu()), gpu(kGpu);
    cpu.set_conv_autocast(half);
    gpu.set_conv_autocast(half);
    std::mt19937 a(23), b(23);
    Conv2D on_cpu(8, 16, 3, 2, 1, a, "conv"), on_gpu(8, 16, 3, 2, 1, b, "conv");
    on_cpu.place(cpu);
    on_gpu.place(gpu);
    const Tensor x = random_tensor({4, 8, 10, 10}, 46), dy = random_tensor({4, 16, 5, 5}, 47);
    expect_close(on_gpu.forward(x.to(kGpu), true).to_vector(), on_cpu.forward(x, true).to_vector(), tolerance,
                 "forward");
    expect_close(on_gpu.backward(dy.to(kGpu)).to_vector(), on_cpu.backward(dy).to_vector(), tolerance,
                 "input gradient");
    for (size_t i = 0; i < 2; ++i)
      expect_close(on_gpu.parameters()[i]->grad.to_vector(), on_cpu.parameters()[i]->grad.to_vector(), tolerance,
                   "parameter gradient");
  }
}

TEST_CASE("16-bit tensors on the device hold what the CPU conversion makes") {
  const Tensor x = random_tensor({3, 7}, 41);
  for (DType half : {DType::kFloat16, DType::kBFloat16}) {
    const Tensor on_device = x.to(kGpu).cast(half);
    CHECK(on_device.on_cuda());
    CHECK(on_device.dtype() == half);
    CHECK(on_device.to_vector() == x.cast(half).to_vector());
    CHECK(on_device.to(Device::cpu()).to_vector() == x.cast(half).to_vector());  // the bytes, moved
  }
}

TEST_CASE("loss scaling on the GPU: the fused unscale restores the gradients, and an inf skips the step") {
  Execution gpu(kGpu);
  LossScalingOptions options;
  options.init_loss_scaling = 1024;
  options.decr_every_n_nan_or_inf = 1;
  std::vector<std::string> lines;
  LossScaler scaler(options, [&lines](const std::string& line) { lines.push_back(line); });
  Parameter a("a", {100}), b("b", {3, 5});
  const Tensor ga = random_tensor({100}, 42), gb = random_tensor({3, 5}, 43);
  std::vector<float> scaled_a = ga.to_vector(), scaled_b = gb.to_vector();
  for (float& v : scaled_a) v *= 1024;
  for (float& v : scaled_b) v *= 1024;
  a.grad = Tensor::from_values({100}, scaled_a, kGpu);
  b.grad = Tensor::from_values({3, 5}, scaled_b, kGpu);
  CHECK(scaler.unscale_and_update(gpu.context(), {&a, &b}));
  CHECK(a.grad.to_vector() == ga.to_vector());  // by a power of two: exact
  CHECK(b.grad.to_vector() == gb.to_vector());
  std::vector<float> poisoned = gb.to_vector();
  poisoned[7] = std::numeric_limits<float>::quiet_NaN();
  b.grad = Tensor::from_values({3, 5}, poisoned, kGpu);
  CHECK_FALSE(scaler.unscale_and_update(gpu.context(), {&a, &b}));
  CHECK(scaler.scale() == 512);
  CHECK(lines.size() == 1);
}

TEST_CASE("a checkpoint of an O2 model on the GPU holds float32 master weights and loads in float32 on the CPU") {
  Sequential net = small_cnn();
  Execution gpu(kGpu);
  net.place(gpu);
  auto opt = make_optimizer(OptimizerConfig{OptimizerKind::kMomentum});
  for (Parameter* p : net.parameters()) {
    opt->state()[master_weights_name(p->name)] = p->value;
    p->value = p->value.cast(DType::kFloat16);
    CHECK(p->value.on_cuda());
  }
  const auto dir = std::filesystem::temp_directory_path() / ("gpu-amp-ckpt-" + std::to_string(::getpid()));
  save_checkpoint(dir.string(), {1, 10}, net, *opt);
  Sequential restored = small_cnn();
  auto restored_opt = make_optimizer(OptimizerConfig{OptimizerKind::kMomentum});
  REQUIRE(load_latest_checkpoint(dir.string(), restored, *restored_opt));
  auto params = net.parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    CHECK(restored.parameters()[i]->value.dtype() == DType::kFloat32);
    CHECK(restored.parameters()[i]->value.to_vector() ==
          opt->state().at(master_weights_name(params[i]->name)).to_vector());
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("data parallelism reduces device buckets over NCCL") {
  paddle::store::KvStoreServer server("127.0.0.1", 0);
  paddle::store::RendezvousStore client("127.0.0.1", server.port(), std::chrono::seconds(10));
  paddle::collective::GlooStore store(client);
  paddle::collective::NcclCommunicator comm(0, 1, 0, store, std::chrono::seconds(30));
  float host_value = 3.0f;
  comm.allreduce(&host_value, 1, paddle::collective::ReduceOp::kAvg);  // host memory is staged
  CHECK(host_value == 3.0f);

  Sequential plain = small_cnn(), parallel_net = small_cnn();
  Execution gpu(kGpu);
  plain.place(gpu);
  parallel_net.place(gpu);
  auto plain_opt = make_optimizer(OptimizerConfig{OptimizerKind::kSgd}), parallel_opt = make_optimizer(OptimizerConfig{OptimizerKind::kSgd});
  plain_opt->place(gpu);
  parallel_opt->place(gpu);
  DataParallel parallel(parallel_net, comm, 4096, &gpu);  // small buckets: several per step
  CHECK(parallel.bucket_count() > 1);
  parallel.broadcast_parameters();
  const auto expected = train_steps(plain, *plain_opt, kGpu);
  const auto got = train_steps(parallel_net, *parallel_opt, kGpu, &parallel);
  expect_close(got, expected, 1e-6, "losses with one rank");
  auto pa = plain.parameters(), pb = parallel_net.parameters();
  for (size_t i = 0; i < pa.size(); ++i) expect_close(pb[i]->value.to_vector(), pa[i]->value.to_vector(), 1e-6, "params");
}

int main(int argc, char** argv) {
  if (paddle::kernels::cuda_device_count() == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
