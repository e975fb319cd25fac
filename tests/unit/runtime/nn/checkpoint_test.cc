#include <doctest/doctest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <random>

#include "runtime/nn/checkpoint.h"
#include "runtime/nn/layers.h"
#include "runtime/nn/optimizer.h"
#include "runtime/nn/sequential.h"

using namespace paddle::runtime;
namespace fs = std::filesystem;

TEST_CASE("checkpoints round-trip and reject mismatches") {
  const fs::path dir = fs::temp_directory_path() / ("ckpt-" + std::to_string(::getpid()));
  std::mt19937 rng(1);
  Sequential a;
  a.add(std::make_unique<Linear>(3, 2, rng, "fc")).add(std::make_unique<BatchNorm2D>(2, "bn"));
  auto opt = make_optimizer(OptimizerConfig{OptimizerKind::kMomentum});
  for (Parameter* p : a.parameters()) std::ranges::fill(p->grad.values(), 0.5f);
  opt->step(a.parameters(), 0.1f);
  save_checkpoint(dir.string(), {3, 42}, a, *opt);

  std::mt19937 other(99);
  Sequential b;
  b.add(std::make_unique<Linear>(3, 2, other, "fc")).add(std::make_unique<BatchNorm2D>(2, "bn"));
  auto opt_b = make_optimizer(OptimizerConfig{OptimizerKind::kMomentum});
  auto at = load_latest_checkpoint(dir.string(), b, *opt_b);
  REQUIRE(at);
  CHECK(at->epoch == 3);
  CHECK(at->step == 42);
  CHECK(b.parameters()[0]->value.to_vector() == a.parameters()[0]->value.to_vector());
  REQUIRE(opt_b->state().size() == opt->state().size());
  for (auto& [name, t] : opt->state()) CHECK(opt_b->state().at(name).to_vector() == t.to_vector());

  Sequential c;
  c.add(std::make_unique<Linear>(4, 2, other, "fc")).add(std::make_unique<BatchNorm2D>(2, "bn"));
  CHECK_THROWS_WITH_AS(load_latest_checkpoint(dir.string(), c, *opt_b), doctest::Contains("tensor 'fc.w' has 6 values"),
                       CheckpointError);
  fs::resize_file(dir / "checkpoint-3.bin", fs::file_size(dir / "checkpoint-3.bin") - 8);
  CHECK_THROWS_WITH_AS(load_latest_checkpoint(dir.string(), b, *opt_b), doctest::Contains("truncated"), CheckpointError);
  CHECK_FALSE(load_latest_checkpoint((dir / "empty").string(), b, *opt_b));
  fs::remove_all(dir);
}
