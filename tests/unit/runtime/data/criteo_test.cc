#include <doctest/doctest.h>

#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "runtime/data/criteo.h"

using namespace paddle::runtime;
namespace fs = std::filesystem;

TEST_CASE("raw Criteo: 100 lines of the PaddleRec sample, scaled and hashed") {
  const std::string file = std::string(PADDLE_SHARED_DATA) + "/criteo_sample/part-0";
  REQUIRE_MESSAGE(fs::exists(file), "no " << file << ": the shared data sets belong beside the checkout");
  CtrDataset d = load_criteo_raw(file, 1000001);
  CHECK(d.size() == 100);
  double clicks = 0;
  for (float l : d.labels) clicks += l;
  CHECK(clicks == 29);
  CHECK(d.dense.size() == 100 * kCriteoDense);
  CHECK(d.sparse.size() == 100 * kCriteoSlots);
  for (uint64_t k : d.sparse) CHECK(k < 1000001);
  CHECK(d.sparse[0] == slot_hash(14, "05db9164") % 1000001);  // the first line's first category
  CHECK(d.dense[2] == 0.0f);                                    // an empty field
  CHECK(d.dense[0] == doctest::Approx(2.0 / 20));               // (x - min) / (max - min)
  CHECK(d.dense[1] == doctest::Approx((0.0 + 3) / 603));
}

TEST_CASE("PaddleRec slot format: the 80-line sample") {
  const std::string file = std::string(PADDLE_SHARED_DATA) + "/criteo_slot/sample_train.txt";
  REQUIRE_MESSAGE(fs::exists(file), "no " << file << ": the shared data sets belong beside the checkout");
  CtrDataset d = load_criteo_slot(file, 1000001);
  CHECK(d.size() == 80);
  double clicks = 0;
  for (float l : d.labels) clicks += l;
  CHECK(clicks == 23);
  CtrDataset test = d.split_off(64);
  CHECK(d.size() == 64);
  CHECK(test.size() == 16);
  CHECK(test.sparse.size() == 16 * kCriteoSlots);
}

TEST_CASE("feature signs: raw values become 64-bit slot hashes, slot feasigns pass through") {
  const std::string raw = std::string(PADDLE_SHARED_DATA) + "/criteo_sample/part-0";
  const CtrDataset signs = load_criteo_raw(raw);
  CHECK(signs.sparse[0] == slot_hash(14, "05db9164"));
  bool above_32_bits = false;
  for (uint64_t k : signs.sparse) above_32_bits |= k > UINT32_MAX;
  CHECK(above_32_bits);
  CHECK(slot_hash(14, "05db9164") != slot_hash(15, "05db9164"));  // one value, two slots: two signs

  const std::string slot = std::string(PADDLE_SHARED_DATA) + "/criteo_slot/sample_train.txt";
  CHECK(load_criteo_slot(slot).sparse[0] == 737395);  // the first line's "1:737395"

  const fs::path dir = fs::temp_directory_path() / ("criteo_signs_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string line = "click:1";
  for (int i = 0; i < kCriteoDense; ++i) line += " dense_feature:0.5";
  for (int s = 1; s <= kCriteoSlots; ++s)
    line += " " + std::to_string(s) + ":" + (s == 1 ? "18446744073709551610" : s == 2 ? "abc" : "4294967297");
  std::ofstream(dir / "big.txt") << line << "\n";
  const CtrDataset big = load_criteo_slot((dir / "big.txt").string());
  CHECK(big.sparse[0] == 18446744073709551610ULL);
  CHECK(big.sparse[1] == slot_hash(2, "abc"));  // not a number: hashed with its slot
  CHECK(big.sparse[2] == 4294967297ULL);
  CHECK(load_criteo_slot((dir / "big.txt").string(), 1000).sparse[0] == 18446744073709551610ULL % 1000);
  fs::remove_all(dir);
}

TEST_CASE("malformed click data is named with file and line") {
  const fs::path dir = fs::temp_directory_path() / ("ctr-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "bad.txt") << "1\t2\t3\n";
  CHECK_THROWS_WITH_AS(load_criteo_raw((dir / "bad.txt").string(), 100), doctest::Contains("bad.txt:1: 3 tab-separated"),
                       paddle::common::DataError);
  std::ofstream(dir / "slot.txt") << "click:1 dense_feature:0.5 1:7\n";
  CHECK_THROWS_WITH_AS(load_criteo_slot((dir / "slot.txt").string(), 100), doctest::Contains("slot.txt:1: 1 click, 1 dense"),
                       paddle::common::DataError);
  std::ofstream(dir / "clicks.txt") << "click:1 click:0\n";
  CHECK_THROWS_WITH_AS(load_criteo_slot((dir / "clicks.txt").string(), 100), doctest::Contains("clicks.txt:1: a second click"),
                       paddle::common::DataError);
  std::ofstream(dir / "wrap.txt") << "click:1 4294967297:7\n";  // not slot 1 modulo 2^32
  CHECK_THROWS_WITH_AS(load_criteo_slot((dir / "wrap.txt").string(), 100), doctest::Contains("slot '4294967297' out of order"),
                       paddle::common::DataError);
  CHECK_THROWS_WITH_AS(load_criteo_raw((dir / "none").string(), 100), doctest::Contains("no such file"), paddle::common::DataError);
  fs::remove_all(dir);
}
