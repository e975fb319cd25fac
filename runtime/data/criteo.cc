#include "runtime/data/criteo.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <functional>
#include <sstream>

#include "common/parse.h"
#include "runtime/data/dataset.h"
#include "runtime/data/text_lines.h"

namespace paddle::runtime {
namespace {

namespace fs = std::filesystem;

// PaddleFleetX's Criteo reader ranges.
constexpr std::array<float, kCriteoDense> kMin = {0, -3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
constexpr std::array<float, kCriteoDense> kMax = {20, 600, 100, 50, 64000, 500, 100, 50, 500, 10, 10, 10, 50};

std::vector<std::string> files_of(const std::string& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return {path};
  if (!fs::is_directory(path, ec)) throw common::DataError(fmt::format("{}: no such file or directory", path));
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(path))
    if (entry.is_regular_file()) files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw common::DataError(fmt::format("{}: no data files", path));
  return files;
}

// Calls each(file, line number, line) for every non-empty line of every file under `path`, in order.
void for_each_line(const std::string& path, const std::function<void(const std::string&, int, std::string&)>& each) {
  for (const auto& file : files_of(path)) {
    TextLines lines(file);
    std::string line;
    while (lines.next(line)) each(file, lines.line_number(), line);
  }
}

float parse_float(const std::string& text, const std::string& file, int line, const char* what) {
  try {
    size_t used = 0;
    float v = std::stof(text, &used);
    if (used != text.size()) throw std::invalid_argument(text);
    return v;
  } catch (const std::exception&) {
    throw common::DataError(fmt::format("{}:{}: {} '{}' is not a number", file, line, what, text));
  }
}

float parse_label(const std::string& text, const std::string& file, int line) {
  if (text != "0" && text != "1") throw common::DataError(fmt::format("{}:{}: label '{}' is not 0 or 1", file, line, text));
  return text == "1" ? 1.0f : 0.0f;
}

uint64_t fold(uint64_t sign, uint64_t fold_into) { return fold_into > 0 ? sign % fold_into : sign; }

// A slot file's id: a decimal feasign as it is, any other text hashed with its slot.
uint64_t slot_feasign(int slot, const std::string& id) {
  uint64_t sign = 0;
  const auto [end, error] = std::from_chars(id.data(), id.data() + id.size(), sign);
  if (error == std::errc() && end == id.data() + id.size() && !id.empty()) return sign;
  return slot_hash(slot, id);
}

}  // namespace

uint64_t slot_hash(int slot, const std::string& text) {
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&](unsigned char c) {
    h ^= c;
    h *= 1099511628211ULL;
  };
  for (char c : std::to_string(slot)) mix(static_cast<unsigned char>(c));
  mix(':');
  for (char c : text) mix(static_cast<unsigned char>(c));
  return h;
}

CtrDataset CtrDataset::split_off(size_t begin) {
  CtrDataset tail;
  begin = std::min(begin, size());
  tail.labels.assign(labels.begin() + static_cast<long>(begin), labels.end());
  tail.dense.assign(dense.begin() + static_cast<long>(begin * kCriteoDense), dense.end());
  tail.sparse.assign(sparse.begin() + static_cast<long>(begin * kCriteoSlots), sparse.end());
  labels.resize(begin);
  dense.resize(begin * kCriteoDense);
  sparse.resize(begin * kCriteoSlots);
  return tail;
}

CtrDataset load_criteo_raw(const std::string& path, uint64_t fold_into) {
  CtrDataset d;
  for_each_line(path, [&](const std::string& file, int number, std::string& line) {
    const std::vector<std::string> fields = split_fields(line, "\t");
    if (fields.size() != 1 + kCriteoDense + kCriteoSlots)
      throw common::DataError(fmt::format("{}:{}: {} tab-separated fields, expected {}", file, number, fields.size(),
                                  1 + kCriteoDense + kCriteoSlots));
    d.labels.push_back(parse_label(fields[0], file, number));
    for (int i = 0; i < kCriteoDense; ++i) {
      const std::string& f = fields[1 + i];
      const float x =
          f.empty() ? 0.0f : (parse_float(f, file, number, "dense feature") - kMin[i]) / (kMax[i] - kMin[i]);
      d.dense.push_back(f.empty() ? 0.0f : x);
    }
    for (int i = 0; i < kCriteoSlots; ++i)
      d.sparse.push_back(fold(slot_hash(1 + kCriteoDense + i, fields[1 + kCriteoDense + i]), fold_into));
  });
  return d;
}

CtrDataset load_criteo_slot(const std::string& path, uint64_t fold_into) {
  CtrDataset d;
  for_each_line(path, [&](const std::string& file, int number, std::string& line) {
    std::istringstream tokens(line);
    std::string token;
    int dense = 0, slots = 0;
    bool label = false;
    while (tokens >> token) {
      const size_t colon = token.find(':');
      if (colon == std::string::npos)
        throw common::DataError(fmt::format("{}:{}: token '{}' is not key:value", file, number, token));
      const std::string key = token.substr(0, colon), value = token.substr(colon + 1);
      if (key == "click") {
        if (label) throw common::DataError(fmt::format("{}:{}: a second click", file, number));
        d.labels.push_back(parse_label(value, file, number));
        label = true;
      } else if (key == "dense_feature") {
        d.dense.push_back(parse_float(value, file, number, "dense_feature"));
        ++dense;
      } else {
        const int64_t slot = common::to_int(key).value_or(0);
        if (slot < 1 || slot > kCriteoSlots || slot != slots + 1)
          throw common::DataError(fmt::format("{}:{}: slot '{}' out of order (expected {})", file, number, key, slots + 1));
        d.sparse.push_back(fold(slot_feasign(static_cast<int>(slot), value), fold_into));
        ++slots;
      }
    }
    if (!label && dense == 0 && slots == 0) return;  // blank line
    if (!label || dense != kCriteoDense || slots != kCriteoSlots)
      throw common::DataError(fmt::format("{}:{}: {} click, {} dense features and {} slots; expected 1, {}, {}", file, number,
                                  label ? 1 : 0, dense, slots, kCriteoDense, kCriteoSlots));
  });
  return d;
}

}  // namespace paddle::runtime
