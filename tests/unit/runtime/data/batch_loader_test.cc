#include <doctest/doctest.h>

#include <set>

#include "runtime/data/batch_loader.h"

using namespace paddle::runtime;

TEST_CASE("W ranks with batch B cover exactly the global batches of one rank with batch W*B") {
  Dataset d;
  d.sample_shape = {1};
  for (int i = 0; i < 100; ++i) {
    d.features.push_back(static_cast<float>(i));
    d.targets.push_back(0);
  }
  ShardSpec one{8, 0, 1, 5, true, 2};
  BatchLoader whole(d, one, 3);
  std::vector<float> expected;
  while (auto b = whole.next())
    for (float v : b->inputs.values()) expected.push_back(v);
  CHECK(expected.size() == 96);  // 12 global batches of 8; the last 4 samples dropped
  std::vector<std::vector<float>> per_rank(2);
  for (int r = 0; r < 2; ++r) {
    BatchLoader part(d, ShardSpec{4, r, 2, 5, true, 2}, 3);
    while (auto b = part.next())
      for (float v : b->inputs.values()) per_rank[r].push_back(v);
  }
  std::vector<float> interleaved;
  for (size_t g = 0; g < 12; ++g)
    for (int r = 0; r < 2; ++r)
      interleaved.insert(interleaved.end(), per_rank[r].begin() + static_cast<long>(g * 4),
                         per_rank[r].begin() + static_cast<long>(g * 4 + 4));
  CHECK(interleaved == expected);
  BatchLoader other_epoch(d, one, 4);
  CHECK(other_epoch.next()->inputs.to_vector() != std::vector<float>(expected.begin(), expected.begin() + 8));
}
