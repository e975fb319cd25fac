#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "ps/tables.h"
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
