#pragma once
// Readers for the training data sets, each from files in a data directory.

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/data/dataset.h"

namespace paddle::runtime {

struct TrainTestSplit {
  Dataset train;
  Dataset test;
  int classes = 0;  // classification: labels are 0..classes-1; 0 for regression
};

// UCI Boston housing: DATA_DIR/housing.data, 14 whitespace-separated numbers per line. As Paddle's
// uci_housing: each of the 13 features becomes (x - mean) / (max - min) over the whole file,
// MEDV is the target, the first 80% of lines train and the rest test.
TrainTestSplit load_uci_housing(const std::string& data_dir);
inline constexpr int64_t kUciHousingFeatures = 13;

// Fashion-MNIST from its gzip IDX files in DATA_DIR (train-images-idx3-ubyte.gz, ...), images
// [1,28,28] scaled to [-1,1] (Paddle's Normalize(127.5, 127.5)), labels 0..9.
TrainTestSplit load_fashion_mnist(const std::string& data_dir);
inline constexpr int kFashionMnistClasses = 10;
// load_fashion_mnist's image shape [1,H,W], from the training images' header alone.
std::vector<int64_t> fashion_mnist_image_shape(const std::string& data_dir);

}  // namespace paddle::runtime
