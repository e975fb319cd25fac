#include <doctest/doctest.h>

#include <vector>

#include "ps/wire/sharding.h"

using namespace paddle::ps;

TEST_CASE("sharding: blocks cover the vector; keys spread over servers") {
  size_t covered = 0;
  for (size_t s = 0; s < 3; ++s) {
    auto [b, e] = dense_block(10, 3, s);
    CHECK(b == covered);
    covered = e;
  }
  CHECK(covered == 10);
  std::vector<int> counts(2);
  for (uint64_t k = 0; k < 1000; ++k) counts[server_of_key(k, 2)]++;
  CHECK(counts[0] == 504);  // 0..15 -> server 0, 16..31 -> server 1, ...; 992..999 -> server 0
}
