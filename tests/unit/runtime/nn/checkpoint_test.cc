#include <doctest/doctest.h>

#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "common/checksum.h"
#include "common/file.h"

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
  CHECK(at->at.rounds == 3);
  CHECK(at->at.step == 42);
  CHECK(at->file == "checkpoint-3.bin");
  CHECK(at->refused.empty());
  CHECK(b.parameters()[0]->value.to_vector() == a.parameters()[0]->value.to_vector());
  REQUIRE(opt_b->state().size() == opt->state().size());
  for (auto& [name, t] : opt->state()) CHECK(opt_b->state().at(name).to_vector() == t.to_vector());

  Sequential c;
  c.add(std::make_unique<Linear>(4, 2, other, "fc")).add(std::make_unique<BatchNorm2D>(2, "bn"));
  CHECK_THROWS_WITH_AS(load_latest_checkpoint(dir.string(), c, *opt_b), doctest::Contains("tensor 'fc.w' has 6 values"),
                       CheckpointError);
  fs::resize_file(dir / "checkpoint-3.bin", fs::file_size(dir / "checkpoint-3.bin") - 12);
  CHECK_THROWS_WITH_AS(load_latest_checkpoint(dir.string(), b, *opt_b), doctest::Contains("truncated"), CheckpointError);
  CHECK_FALSE(load_latest_checkpoint((dir / "empty").string(), b, *opt_b));
  fs::remove_all(dir);
}

namespace {

const std::string kFile = "out/checkpoint-1.bin";

// A version-2 file around HEADER and DATA with a checksum that matches.
std::string checked_file(const std::string& header, const std::string& data) {
  std::string bytes = "PADDLE-LAUNCH-CHECKPOINT 2\n" + header + "\n" + data;
  const uint32_t crc = paddle::common::crc32(bytes);
  for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>((crc >> (8 * i)) & 0xFF));
  return bytes;
}

std::string floats(std::vector<float> values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

// The one-line CheckpointError parsing BYTES gives; fails the test when there is none.
std::string error_of(const std::string& bytes) {
  try {
    parse_checkpoint(bytes, kFile);
  } catch (const CheckpointError& e) {
    return e.what();
  }
  FAIL("no CheckpointError");
  return "";
}

void check_refused(const std::string& bytes, const std::string& what) {
  const std::string message = error_of(bytes);
  CAPTURE(message);
  CHECK(message.starts_with(kFile + ": "));
  CHECK(message.find(what) != std::string::npos);
  CHECK(message.find('\n') == std::string::npos);
}


}  // namespace

TEST_CASE("a well-formed checkpoint parses; version 1, without a checksum, still does") {
  const std::string header = R"({"epoch": 2, "step": 7, "tensors": [{"name": "a", "count": 2}, {"name": "b", "count": 0}]})";
  const auto contents = parse_checkpoint(checked_file(header, floats({1.5f, -2})), kFile);
  CHECK(contents.at.rounds == 2);
  CHECK(contents.at.step == 7);
  REQUIRE(contents.tensors.size() == 2);
  CHECK(contents.tensors[0].second == std::vector<float>{1.5f, -2});
  CHECK(contents.tensors[1].second.empty());
  const auto v1 = parse_checkpoint("PADDLE-LAUNCH-CHECKPOINT 1\n" + header + "\n" + floats({3, 4}), kFile);
  CHECK(v1.tensors[0].second == std::vector<float>{3, 4});
}

TEST_CASE("truncated, bit-flipped and hostile checkpoints are one-line errors naming the file") {
  const std::string header = R"({"epoch": 1, "step": 5, "tensors": [{"name": "w", "count": 4}]})";
  const std::string good = checked_file(header, floats({1, 2, 3, 4}));
  for (size_t cut : {size_t{0}, size_t{10}, size_t{30}, good.size() - 20, good.size() - 5, good.size() - 1}) {
    CAPTURE(cut);
    const std::string message = error_of(good.substr(0, cut));
    CHECK(message.starts_with(kFile + ": "));
    CHECK(message.find('\n') == std::string::npos);
  }
  check_refused(good.substr(0, good.size() - 8), "truncated in tensor 'w'");
  for (size_t at = 0; at < good.size(); ++at) {  // every single-bit flip, none loads
    std::string flipped = good;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x10);
    CAPTURE(at);
    CHECK(error_of(flipped).starts_with(kFile + ": "));
  }
  std::string flipped_value = good;
  flipped_value[good.size() - 6] ^= 0x01;
  check_refused(flipped_value, "checksum mismatch");
  check_refused("PADDLE-LAUNCH-CHECKPOINT 9\n{}\n", "format version 9, this build reads versions 1 and 2");
  check_refused("P3\n{}\n", "not a paddle-launch checkpoint");
  check_refused(checked_file("{\"epoch\": 1, ", ""), "bad header");
  check_refused(checked_file("[1, 2]", ""), "bad header");
  check_refused(checked_file(R"({"epoch": 1, "step": 1})", ""), "no tensor list");
  check_refused(checked_file(R"({"epoch": -1, "step": 1, "tensors": []})", ""), "epoch is -1");
  check_refused(checked_file(R"({"epoch": 1, "step": "x", "tensors": []})", ""), "step is \"x\"");
  check_refused(checked_file(R"({"epoch": 1, "step": 1, "tensors": [{"name": "w", "count": -4}]})", floats({1})),
                "the count of 'w' is -4");
  check_refused(checked_file(R"({"epoch": 1, "step": 1, "tensors": [{"name": "w", "count": 1.5}]})", floats({1})),
                "not a count");
  check_refused(checked_file(R"({"epoch": 1, "step": 1, "tensors": [{"count": 1}]})", floats({1})),
                "lacks a name or count");
  check_refused(checked_file(R"({"epoch": 1, "step": 1, "tensors": [{"name": "w", "count": 4611686018427387904}]})",
                             floats({1})),
                "truncated in tensor 'w': it needs 4611686018427387904 values");
  check_refused(checked_file(R"({"epoch": 1, "step": 1, "tensors": [{"name": "w", "count": 18446744073709551615}]})",
                             floats({1})),
                "not a count");
  check_refused(checked_file(R"({"epoch": 1, "step": 1, "tensors": [{"name": "a", "count": 2305843009213693952},)"
                             R"( {"name": "b", "count": 2305843009213693952}]})", floats({1})),
                "truncated in tensor 'a'");
  check_refused(checked_file(R"({"epoch": 1, "step": 1, "tensors": [{"name": "w", "count": 1}]})", floats({1, 2})),
                "4 bytes after the last tensor");
}

TEST_CASE("loading a damaged checkpoint through latest names the checkpoint file") {
  const fs::path dir = fs::temp_directory_path() / ("ckpt-damaged-" + std::to_string(::getpid()));
  std::mt19937 rng(1);
  Sequential model;
  model.add(std::make_unique<Linear>(3, 2, rng, "fc"));
  auto opt = make_optimizer(OptimizerConfig{OptimizerKind::kMomentum});
  save_checkpoint(dir.string(), {1, 4}, model, *opt);
  const fs::path file = dir / "checkpoint-1.bin";
  const std::string good = paddle::common::read_file(file).value_or("");
  CHECK(good.starts_with("PADDLE-LAUNCH-CHECKPOINT 2\n"));
  CHECK_FALSE(fs::exists(dir / "checkpoint-1.bin.tmp"));
  std::string flipped = good;
  flipped[good.size() - 10] ^= 0x40;
  std::ofstream(file, std::ios::binary) << flipped;
  const std::string named = file.string() + ": checksum mismatch";
  CHECK_THROWS_WITH_AS(load_latest_checkpoint(dir.string(), model, *opt), doctest::Contains(named.c_str()),
                       CheckpointError);
  fs::remove(file);
  const std::string missing = file.string() + ": named by";
  CHECK_THROWS_WITH_AS(load_latest_checkpoint(dir.string(), model, *opt), doctest::Contains(missing.c_str()),
                       CheckpointError);
  std::ofstream(dir / "latest") << "\n";
  CHECK_THROWS_WITH_AS(load_latest_checkpoint(dir.string(), model, *opt), doctest::Contains("names no checkpoint file"),
                       CheckpointError);
  fs::remove_all(dir);
}

TEST_CASE("a damaged newest checkpoint is refused and the one before it loads; with none whole, each is named") {
  const fs::path dir = fs::temp_directory_path() / ("ckpt-fallback-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::mt19937 rng(5);
  Sequential model;
  model.add(std::make_unique<Linear>(3, 2, rng, "fc"));
  auto opt = make_optimizer(OptimizerConfig{OptimizerKind::kMomentum});
  std::vector<std::vector<float>> saved;
  for (int64_t epoch = 1; epoch <= 3; ++epoch) {
    for (Parameter* p : model.parameters()) std::ranges::fill(p->grad.values(), 0.25f * static_cast<float>(epoch));
    opt->step(model.parameters(), 0.1f);
    save_checkpoint(dir.string(), {epoch, epoch * 10}, model, *opt);
    saved.push_back(model.parameters()[0]->value.to_vector());
  }
  const auto damage = [&](int64_t epoch, bool truncate) {
    const fs::path file = dir / ("checkpoint-" + std::to_string(epoch) + ".bin");
    std::string bytes = paddle::common::read_file(file).value_or("");
    if (truncate)
      bytes.resize(bytes.size() / 2);
    else
      bytes[bytes.size() - 9] ^= 0x01;
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
  };
  auto fresh = make_optimizer(OptimizerConfig{OptimizerKind::kMomentum});
  damage(3, false);
  auto loaded = load_latest_checkpoint(dir.string(), model, *fresh);
  REQUIRE(loaded);
  CHECK(loaded->file == "checkpoint-2.bin");
  CHECK(loaded->at.rounds == 2);
  CHECK(loaded->at.step == 20);
  REQUIRE(loaded->refused.size() == 1);
  CHECK(loaded->refused[0].starts_with((dir / "checkpoint-3.bin").string() + ": checksum mismatch"));
  CHECK(model.parameters()[0]->value.to_vector() == saved[1]);

  damage(2, true);
  loaded = load_latest_checkpoint(dir.string(), model, *fresh);
  REQUIRE(loaded);
  CHECK(loaded->file == "checkpoint-1.bin");
  CHECK(loaded->refused.size() == 2);
  CHECK(model.parameters()[0]->value.to_vector() == saved[0]);

  Sequential other;
  other.add(std::make_unique<Linear>(4, 2, rng, "fc"));
  CHECK_THROWS_WITH_AS(load_latest_checkpoint(dir.string(), other, *fresh), doctest::Contains("checkpoint-1.bin: tensor 'fc.w'"),
                       CheckpointError);

  fs::remove(dir / "checkpoint-1.bin");
  const std::string none = dir.string() + ": no whole checkpoint left to resume from: " + (dir / "checkpoint-3.bin").string();
  CHECK_THROWS_WITH_AS(load_latest_checkpoint(dir.string(), model, *fresh), doctest::Contains(none.c_str()), CheckpointError);
  fs::remove_all(dir);
}

namespace {

// A Linear model made mixed-precision at O2 by hand: float16 parameters, and the optimizer's
// float32 master weights holding the values they were rounded from.
void make_o2(Sequential& net, Optimizer& optimizer) {
  for (Parameter* p : net.parameters()) {
    optimizer.state()[master_weights_name(p->name)] = p->value;
    p->value = p->value.cast(DType::kFloat16);
  }
}

}  // namespace

TEST_CASE("a checkpoint of an AMP (O2) model stores the float32 master weights and loads in float32 on the CPU") {
  const fs::path dir = fs::temp_directory_path() / ("ckpt-amp-" + std::to_string(::getpid()));
  std::mt19937 rng(7);
  Sequential amp;
  amp.add(std::make_unique<Linear>(5, 4, rng, "fc"));
  auto opt = make_optimizer(OptimizerConfig{OptimizerKind::kMomentum});
  opt->state()["velocity/fc.w"] = Tensor({5, 4}, 0.25f);
  make_o2(amp, *opt);
  const std::vector<float> master = opt->state().at("master/fc.w").to_vector();
  const std::vector<float> rounded = amp.parameters()[0]->value.to_vector();
  REQUIRE(amp.parameters()[0]->value.dtype() == DType::kFloat16);
  REQUIRE(master != rounded);  // random weights are not float16 values: the test can tell them apart
  save_checkpoint(dir.string(), {1, 10}, amp, *opt);

  // The file: float32 master weights under the parameters' names, no rounded copy, no master/ entries.
  const CheckpointContents contents =
      parse_checkpoint(paddle::common::read_file(dir / "checkpoint-1.bin").value_or(""), "checkpoint-1.bin");
  std::vector<std::string> names;
  for (const auto& [name, values] : contents.tensors) {
    names.push_back(name);
    if (name == "fc.w") CHECK(values == master);
  }
  CHECK(names == std::vector<std::string>{"fc.w", "fc.b", "velocity/fc.w"});

  // A float32 model on the CPU loads it as any checkpoint, with the master weights exactly.
  std::mt19937 other(8);
  Sequential fp32;
  fp32.add(std::make_unique<Linear>(5, 4, other, "fc"));
  auto opt32 = make_optimizer(OptimizerConfig{OptimizerKind::kMomentum});
  REQUIRE(load_latest_checkpoint(dir.string(), fp32, *opt32));
  CHECK(fp32.parameters()[0]->value.dtype() == DType::kFloat32);
  CHECK(fp32.parameters()[0]->value.to_vector() == master);
  CHECK(fp32.parameters()[1]->value.to_vector() == opt->state().at("master/fc.b").to_vector());
  CHECK(opt32->state().count("master/fc.w") == 0);
  CHECK(opt32->state().at("velocity/fc.w").to_vector() == std::vector<float>(20, 0.25f));

  // An O2 model gets its master weights back exactly and its float16 parameters rounded from them.
  Sequential again;
  again.add(std::make_unique<Linear>(5, 4, other, "fc"));
  auto opt_again = make_optimizer(OptimizerConfig{OptimizerKind::kMomentum});
  for (Parameter* p : again.parameters()) p->value = p->value.cast(DType::kFloat16);
  REQUIRE(load_latest_checkpoint(dir.string(), again, *opt_again));
  CHECK(again.parameters()[0]->value.dtype() == DType::kFloat16);
  CHECK(again.parameters()[0]->value.to_vector() == rounded);
  CHECK(opt_again->state().at("master/fc.w").to_vector() == master);
  fs::remove_all(dir);
}

TEST_CASE("a newest checkpoint of a newer format is not damage: nothing older loads in its place") {
  const fs::path dir = fs::temp_directory_path() / ("ckpt-newer-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::mt19937 rng(9);
  Sequential model;
  model.add(std::make_unique<Linear>(3, 2, rng, "fc"));
  auto opt = make_optimizer(OptimizerConfig{OptimizerKind::kSgd});
  save_checkpoint(dir.string(), {1, 5}, model, *opt);
  save_checkpoint(dir.string(), {2, 10}, model, *opt);
  std::ofstream(dir / "checkpoint-2.bin", std::ios::binary | std::ios::trunc) << "PADDLE-LAUNCH-CHECKPOINT 9\n{}\n";
  CHECK_THROWS_WITH_AS(load_latest_checkpoint(dir.string(), model, *opt), doctest::Contains("format version 9"),
                       CheckpointVersionError);
  fs::remove_all(dir);
}
