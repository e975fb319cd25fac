#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "ps/table/tables.h"
#include "tests/unit/ps/ps_test_support.h"

using namespace paddle::ps;
using namespace paddle::ps::testing;
TEST_CASE("sparse rows: a seeded init the same everywhere, read before the first push without storing it") {
  SparseTable a(4, UpdateRule::parse("sgd", 1.0f), 9), b(4, UpdateRule::parse("sgd", 1.0f), 9, 0.01f, 3);
  const std::vector<float> before = a.pull({5});
  CHECK(a.rows() == 0);
  std::vector<float> zero(4, 0.0f);
  a.push({5}, zero);
  b.push({5}, zero);
  auto row = a.pull({5});
  CHECK(row == before);
  CHECK(row == b.pull({5}));  // independent of the shard count
  for (float v : row) CHECK(std::fabs(v) <= 0.01f);
  CHECK(row != zero);
  a.push({5}, {1, 1, 1, 1});
  CHECK(a.pull({5})[0] == doctest::Approx(row[0] - 1));
  CHECK_THROWS_AS(a.push({5}, {1}), std::invalid_argument);
}

TEST_CASE("accumulated gradients are applied once, averaged") {
  DenseTable d(2, UpdateRule::parse("sgd", 1.0f));
  d.set({1, 1});
  d.accumulate({1, 2});
  d.accumulate({3, 4});
  CHECK(d.pull() == std::vector<float>{1, 1});
  d.apply_pending(2);
  CHECK(d.pull() == std::vector<float>{-1, -2});
  SparseTable s(1, UpdateRule::parse("sgd", 1.0f), 1, 0.0f);
  s.accumulate({3, 3}, {2, 4});
  s.apply_pending(2);
  CHECK(s.pull({3})[0] == doctest::Approx(-3));
}

TEST_CASE("tables survive save and load; truncation is reported") {
  DenseTable d(3, UpdateRule::parse("adam", 0.1f));
  d.set({1, 2, 3});
  d.push({1, 1, 1});
  SparseTable s(2, UpdateRule::parse("adagrad", 0.1f), 5);
  s.push({1, 99}, {1, 2, 3, 4});
  std::stringstream out;
  d.save(out);
  s.save(out);
  DenseTable d2(3, UpdateRule::parse("adam", 0.1f));
  SparseTable s2(2, UpdateRule::parse("adagrad", 0.1f), 5);
  std::stringstream in(out.str());
  d2.load(in);
  s2.load(in);
  CHECK(d2.pull() == d.pull());
  CHECK(s2.pull({1, 99}) == s.pull({1, 99}));
  std::stringstream cut(out.str().substr(0, out.str().size() - 3));
  DenseTable d3(3, UpdateRule::parse("adam", 0.1f));
  SparseTable s3(2, UpdateRule::parse("adagrad", 0.1f), 5);
  d3.load(cut);
  CHECK_THROWS_AS(s3.load(cut), std::runtime_error);
}

TEST_CASE("sparse arena: many rows through growth, a key twice in a batch updated twice in order, checkpoint round-trip") {
  SparseTable t(3, UpdateRule::parse("adam", 0.1f), 7, 0.01f, 4), fresh(3, UpdateRule::parse("adam", 0.1f), 7, 0.01f, 4);
  std::vector<uint64_t> keys;
  for (uint64_t k = 0; k < 5000; ++k) keys.push_back(k * 7919 + (k % 3 == 0 ? ~uint64_t{0} - k : 0));
  std::vector<float> grads(keys.size() * 3);
  for (size_t i = 0; i < grads.size(); ++i) grads[i] = 0.001f * static_cast<float>(i % 17);
  t.push(keys, grads);
  CHECK(t.rows() == keys.size());

  // The same key twice in one batch: two Adam steps, the first gradient first.
  SparseTable twice(1, UpdateRule::parse("adam", 0.1f), 7), apart(1, UpdateRule::parse("adam", 0.1f), 7);
  twice.push({5, 9, 5}, {1, 2, -3});
  apart.push({5, 9}, {1, 2});
  apart.push({5}, {-3});
  CHECK(twice.pull({5, 9}) == apart.pull({5, 9}));

  std::stringstream out;
  t.save(out);
  std::stringstream in(out.str());
  fresh.load(in);
  CHECK(fresh.rows() == t.rows());
  CHECK(fresh.pull(keys) == t.pull(keys));
  t.push(keys, grads);  // the optimizer state and step counts came along too
  fresh.push(keys, grads);
  CHECK(fresh.pull(keys) == t.pull(keys));
}

TEST_CASE("sparse pending gradients: summed per key across pushes, applied once, then forgotten") {
  SparseTable s(2, UpdateRule::parse("sgd", 1.0f), 1, 0.0f, 2);
  s.accumulate({1, 2, 1}, {1, 1, 2, 2, 3, 3});
  s.accumulate({1}, {4, 4});
  s.apply_pending(2);
  CHECK(s.pull({1, 2}) == std::vector<float>{-4, -4, -1, -1});
  s.apply_pending(2);  // nothing pending any more
  CHECK(s.pull({1}) == std::vector<float>{-4, -4});
  CHECK(s.rows() == 2);
}
