#include "runtime/data/data_sources.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <limits>
#include <sstream>

#include "runtime/data/text_lines.h"

namespace paddle::runtime {

namespace {

constexpr int kHousingColumns = kUciHousingFeatures + 1;  // the features, then MEDV

std::vector<unsigned char> read_gzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) throw common::DataError(fmt::format("{}: cannot open (is the data_dir right?)", path));
  std::vector<unsigned char> out;
  std::array<unsigned char, 1 << 16> buffer;
  int n;
  while ((n = gzread(f, buffer.data(), static_cast<unsigned>(buffer.size()))) > 0) out.insert(out.end(), buffer.begin(), buffer.begin() + n);
  int error = 0;
  std::string message = gzerror(f, &error);  // a pointer into f's state, gone with gzclose
  gzclose(f);
  if (message.starts_with(path + ": ")) message.erase(0, path.size() + 2);  // zlib names the file too
  if (n < 0 || (error != Z_OK && error != Z_STREAM_END))
    throw common::DataError(fmt::format("{}: not a readable gzip file ({})", path, message));
  return out;
}

uint32_t big_endian(const std::vector<unsigned char>& b, size_t at) {
  return (uint32_t{b[at]} << 24) | (uint32_t{b[at + 1]} << 16) | (uint32_t{b[at + 2]} << 8) | b[at + 3];
}

Dataset read_idx_pair(const std::string& images_path, const std::string& labels_path) {
  auto images = read_gzip(images_path);
  auto labels = read_gzip(labels_path);
  if (images.size() < 16 || big_endian(images, 0) != 0x00000803)
    throw common::DataError(fmt::format("{}: not an IDX image file (magic 0x00000803 expected)", images_path));
  if (labels.size() < 8 || big_endian(labels, 0) != 0x00000801)
    throw common::DataError(fmt::format("{}: not an IDX label file (magic 0x00000801 expected)", labels_path));
  const size_t count = big_endian(images, 4), rows = big_endian(images, 8), cols = big_endian(images, 12);
  if (images.size() != 16 + count * rows * cols)
    throw common::DataError(fmt::format("{}: {} bytes, expected {} for {} images of {}x{}", images_path, images.size(),
                                16 + count * rows * cols, count, rows, cols));
  if (big_endian(labels, 4) != count || labels.size() != 8 + count)
    throw common::DataError(fmt::format("{}: {} labels for {} images in {}", labels_path, big_endian(labels, 4), count,
                                images_path));
  Dataset d;
  d.sample_shape = {1, static_cast<int64_t>(rows), static_cast<int64_t>(cols)};
  d.features.resize(count * rows * cols);
  for (size_t i = 0; i < d.features.size(); ++i) d.features[i] = static_cast<float>(images[16 + i]) / 127.5f - 1.0f;
  d.labels.resize(count);
  for (size_t i = 0; i < count; ++i) {
    d.labels[i] = labels[8 + i];
    if (d.labels[i] >= kFashionMnistClasses)
      throw common::DataError(fmt::format("{}: label {} at item {} is not 0..{}", labels_path, d.labels[i], i,
                                          kFashionMnistClasses - 1));
  }
  return d;
}

}  // namespace

TrainTestSplit load_uci_housing(const std::string& data_dir) {
  const std::string path = data_dir + "/housing.data";
  TextLines lines(path);
  std::vector<std::array<double, kHousingColumns>> rows;
  std::string line;
  while (lines.next(line)) {
    const int number = lines.line_number();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    std::istringstream fields(line);
    std::array<double, kHousingColumns> row{};
    int got = 0;
    std::string token;
    while (fields >> token) {
      if (got == kHousingColumns)
        throw common::DataError(fmt::format("{}:{}: more than {} numbers", path, number, kHousingColumns));
      try {
        size_t used = 0;
        row[got] = std::stod(token, &used);
        if (used != token.size()) throw std::invalid_argument(token);
      } catch (const std::exception&) {
        throw common::DataError(fmt::format("{}:{}: '{}' is not a number", path, number, token));
      }
      ++got;
    }
    if (got != kHousingColumns)
      throw common::DataError(fmt::format("{}:{}: {} numbers, expected {}", path, number, got, kHousingColumns));
    rows.push_back(row);
  }
  if (rows.size() < 2) throw common::DataError(fmt::format("{}: only {} records", path, rows.size()));

  std::array<double, kHousingColumns> max, min, mean{};
  max.fill(-std::numeric_limits<double>::infinity());
  min.fill(std::numeric_limits<double>::infinity());
  for (const auto& r : rows)
    for (int c = 0; c < kHousingColumns; ++c) {
      max[c] = std::max(max[c], r[c]);
      min[c] = std::min(min[c], r[c]);
      mean[c] += r[c] / static_cast<double>(rows.size());
    }
  const size_t train_count = static_cast<size_t>(static_cast<double>(rows.size()) * 0.8);
  TrainTestSplit split;
  for (Dataset* d : {&split.train, &split.test}) d->sample_shape = {kUciHousingFeatures};
  for (size_t i = 0; i < rows.size(); ++i) {
    Dataset& d = i < train_count ? split.train : split.test;
    for (int c = 0; c < kHousingColumns - 1; ++c) {
      const double range = max[c] - min[c];
      d.features.push_back(static_cast<float>(range > 0 ? (rows[i][c] - mean[c]) / range : 0.0));
    }
    d.targets.push_back(static_cast<float>(rows[i][kHousingColumns - 1]));
  }
  return split;
}

std::vector<int64_t> fashion_mnist_image_shape(const std::string& data_dir) {
  const std::string path = data_dir + "/train-images-idx3-ubyte.gz";
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) throw common::DataError(fmt::format("{}: cannot open (is the data_dir right?)", path));
  std::vector<unsigned char> header(16);
  const int n = gzread(f, header.data(), static_cast<unsigned>(header.size()));
  gzclose(f);
  if (n != 16 || big_endian(header, 0) != 0x00000803)
    throw common::DataError(fmt::format("{}: not an IDX image file (magic 0x00000803 expected)", path));
  return {1, static_cast<int64_t>(big_endian(header, 8)), static_cast<int64_t>(big_endian(header, 12))};
}

TrainTestSplit load_fashion_mnist(const std::string& data_dir) {
  TrainTestSplit split;
  split.train = read_idx_pair(data_dir + "/train-images-idx3-ubyte.gz", data_dir + "/train-labels-idx1-ubyte.gz");
  split.test = read_idx_pair(data_dir + "/t10k-images-idx3-ubyte.gz", data_dir + "/t10k-labels-idx1-ubyte.gz");
  split.classes = kFashionMnistClasses;
  return split;
}

}  // namespace paddle::runtime
