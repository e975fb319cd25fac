#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "ps/table/helper_pool.h"
#include "ps/table/sparse_table.h"

using namespace paddle::ps;

TEST_CASE("helper pool: every part once, on the caller too") {
  for (size_t helpers : {0, 1, 3}) {
    HelperPool pool(helpers);
    CHECK(pool.helpers() == helpers);
    std::vector<std::atomic<int>> calls(100);
    pool.run(calls.size(), [&](size_t i) { ++calls[i]; });
    for (auto& c : calls) CHECK(c.load() == 1);
    pool.run(0, [](size_t) { FAIL("no parts"); });
  }
}

TEST_CASE("helper pool: several callers at once") {
  HelperPool pool(2);
  std::vector<std::thread> callers;
  std::atomic<long> sum{0};
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      for (int round = 0; round < 200; ++round) pool.run(16, [&](size_t i) { sum += static_cast<long>(i); });
    });
  for (auto& t : callers) t.join();
  CHECK(sum.load() == 4 * 200 * (15 * 16 / 2));
}

TEST_CASE("helper pool: a part's exception reaches the caller once every part is done") {
  HelperPool pool(1);
  std::atomic<int> done{0};
  CHECK_THROWS_WITH_AS(pool.run(8, [&](size_t i) {
    ++done;
    if (i == 3) throw std::runtime_error("part 3");
  }), "part 3", std::runtime_error);
  CHECK(done.load() == 8);
  pool.run(2, [&](size_t) { ++done; });  // still serves
  CHECK(done.load() == 10);
}

TEST_CASE("sparse table with helpers: the same rows as without") {
  SparseTableSpec spec{.name = "ctr", .dim = 4, .seed = 5};
  spec.accessor = SparseTableSpec::Accessor::kCtr;
  SparseTable alone(spec, UpdateRule::parse("sgd", 0.1f));
  SparseTable helped(spec, UpdateRule::parse("sgd", 0.1f));
  HelperPool pool(2);
  helped.set_helpers(&pool);
  std::vector<uint64_t> keys(20000);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = (i * 2654435761u) % 7000;  // repeated keys, in an order
  std::vector<float> grads(keys.size() * alone.push_width());
  for (size_t i = 0; i < grads.size(); ++i) grads[i] = static_cast<float>(i % 13) * 0.01f;
  for (int round = 0; round < 3; ++round) {
    alone.push(keys, grads);
    helped.push(keys, grads);
  }
  CHECK(alone.rows() == helped.rows());
  CHECK(alone.pull(keys) == helped.pull(keys));
}
