#include <doctest/doctest.h>

#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "runtime/data/data_sources.h"

using namespace paddle::runtime;
namespace fs = std::filesystem;

TEST_CASE("UCI housing is read, normalised and split as Paddle does") {
  const std::string dir = std::string(PADDLE_SHARED_DATA) + "/uci_housing";
  REQUIRE_MESSAGE(fs::exists(dir + "/housing.data"), "no " << dir << ": the shared data sets belong beside the checkout");
  TrainTestSplit s = load_uci_housing(dir);
  CHECK(s.train.size() == 404);
  CHECK(s.test.size() == 102);
  CHECK(s.train.targets.front() == doctest::Approx(24.0));
  for (float v : s.train.features) CHECK(std::fabs(v) <= 1.0f);
}

TEST_CASE("a malformed housing file is named with its line") {
  const fs::path dir = fs::temp_directory_path() / ("housing-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "housing.data") << " 1 2 3 4 5 6 7 8 9 10 11 12 13 14\n 1 2 x 4 5 6 7 8 9 10 11 12 13 14\n";
  CHECK_THROWS_WITH_AS(load_uci_housing(dir.string()), doctest::Contains("housing.data:2: 'x' is not a number"), paddle::common::DataError);
  std::ofstream(dir / "housing.data") << " 1 2 3\n";
  CHECK_THROWS_WITH_AS(load_uci_housing(dir.string()), doctest::Contains("housing.data:1: 3 numbers, expected 14"), paddle::common::DataError);
  CHECK_THROWS_WITH_AS(load_uci_housing((dir / "none").string()), doctest::Contains("cannot open"), paddle::common::DataError);
  CHECK_THROWS_WITH_AS(load_fashion_mnist(dir.string()), doctest::Contains("train-images-idx3-ubyte.gz: cannot open"),
                       paddle::common::DataError);
  fs::remove_all(dir);
}

TEST_CASE("Fashion-MNIST from the Debian package") {
  const std::string dir = "/usr/share/datasets/fashion-mnist";
  REQUIRE_MESSAGE(fs::exists(dir + "/t10k-images-idx3-ubyte.gz"), "no " << dir << ": scripts/setup.sh installs dataset-fashion-mnist");
  TrainTestSplit s = load_fashion_mnist(dir);
  CHECK(s.train.size() == 60000);
  CHECK(s.test.size() == 10000);
  CHECK(s.test.sample_shape == std::vector<int64_t>{1, 28, 28});
  CHECK(s.test.labels[0] == 9);  // the first test image is an ankle boot
  for (size_t i = 0; i < 784; ++i) CHECK(s.test.features[i] >= -1.0f);
}
