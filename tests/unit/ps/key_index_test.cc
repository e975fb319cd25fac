#include "ps/key_index.h"

#include <doctest/doctest.h>

#include <random>
#include <unordered_map>

namespace paddle::ps {

TEST_CASE("KeyIndex numbers keys by first sight and gives a repeat its number") {
  KeyIndex index;
  CHECK(index.insert(42) == 0);
  CHECK(index.insert(7) == 1);
  CHECK(index.insert(42) == 0);
  CHECK(index.insert(0) == 2);  // 0 is a key like any other
  CHECK(index.keys() == std::vector<uint64_t>{42, 7, 0});
  index.clear();
  CHECK(index.size() == 0);
  CHECK(index.insert(7) == 0);
  CHECK(index.keys() == std::vector<uint64_t>{7});
}

TEST_CASE("KeyIndex agrees with a map through growth, clears and colliding keys") {
  std::mt19937_64 rng(3);
  KeyIndex index;
  for (int round = 0; round < 3; ++round) {
    std::unordered_map<uint64_t, uint32_t> expected;
    std::vector<uint64_t> order;
    for (int i = 0; i < 20000; ++i) {
      // Small consecutive keys, keys equal in their low bits, and random ones, with repeats.
      const uint64_t pick = rng() % 3;
      const uint64_t key = pick == 0 ? rng() % 3000 : pick == 1 ? (rng() % 3000) << 40 : rng();
      auto [it, added] = expected.try_emplace(key, static_cast<uint32_t>(order.size()));
      if (added) order.push_back(key);
      REQUIRE(index.insert(key) == it->second);
    }
    CHECK(index.keys() == order);
    index.clear();
  }
}

}  // namespace paddle::ps
