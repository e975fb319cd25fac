#include <doctest/doctest.h>

#include <random>
#include <sstream>

#include "ps/table/sparse_table.h"

using namespace paddle::ps;

namespace {

// A CTR table of dim 3 whose rules are SGD at rate 1 and whose rows start at zero.
SparseTableSpec ctr_spec(size_t dim = 3, float initial_range = 0.0f) {
  SparseTableSpec spec{.name = "ctr", .dim = dim, .seed = 11};
  spec.accessor = SparseTableSpec::Accessor::kCtr;
  spec.ctr.embed_rule = SparseRuleSpec::parse("sgd");
  spec.ctr.embed_rule.learning_rate = 1.0f;
  spec.ctr.embed_rule.initial_range = initial_range;
  spec.ctr.embedx_rule = spec.ctr.embed_rule;
  return spec;
}

const UpdateRule kUnused = UpdateRule::parse("sgd", 0.0f);

}  // namespace

TEST_CASE("ctr rows: show and click into the statistics, the gradients through the rules") {
  SparseTable t(ctr_spec(), kUnused);
  CHECK(t.push_width() == 5);
  CHECK(push_width(t.spec()) == 5);
  t.push({7}, {2, 1, 0.5f, 1, 2});
  CHECK(t.pull({7}) == std::vector<float>{-0.5f, -1, -2});  // embed_w, then embedx
  auto row = t.stored_row(7);
  REQUIRE(row);
  // show, click, unseen_days, delta_score, embed_w, embedx[2], flags (touched since save and shrink)
  CHECK((*row)[0] == 2);
  CHECK((*row)[1] == 1);
  CHECK((*row)[2] == 0);
  CHECK((*row)[3] == doctest::Approx(0.1f + 1.0f));
  CHECK(row->size() == 8);
  t.push({7}, {1, 0, 1, 0, 0});
  CHECK(t.pull({7})[0] == -1.5f);
  CHECK((*t.stored_row(7))[0] == 3);
  CHECK_THROWS_WITH_AS(t.push({7}, {1, 2, 3}), doctest::Contains("3 values for 1 keys of 5 floats"),
                       std::invalid_argument);
}

TEST_CASE("ctr rows: adagrad on both parts, state beside each") {
  SparseTableSpec spec = ctr_spec(2);
  spec.ctr.embed_rule = SparseRuleSpec::parse("adagrad");
  spec.ctr.embed_rule.initial_range = 0;
  spec.ctr.embedx_rule = SparseRuleSpec::parse("std_adagrad");
  spec.ctr.embedx_rule.initial_range = 0;
  SparseTable t(spec, kUnused);
  t.push({1}, {1, 0, 1, 2});
  t.push({1}, {1, 0, 1, 2});
  // lr 0.05, initial_g2sum 3: first step 0.05 * g, second scaled by sqrt(3 / (3 + g^2)).
  auto pulled = t.pull({1});
  CHECK(pulled[0] == doctest::Approx(-0.05f - 0.05f * 0.8660254f));
  CHECK(pulled[1] == doctest::Approx(-0.1f - 0.1f * 0.6546537f));
  auto row = *t.stored_row(1);
  CHECK(row[5] == doctest::Approx(2.0f));  // embed g2sum
  CHECK(row[7] == doctest::Approx(8.0f));  // embedx g2sum
}

TEST_CASE("ctr rows: the synchronous mode sums show and click and averages the gradients; GEO adds") {
  SparseTable t(ctr_spec(), kUnused);
  t.accumulate({4}, {1, 0, 2, 2, 2});
  t.accumulate({4}, {1, 1, 4, 4, 4});
  t.apply_pending(2);
  CHECK(t.pull({4}) == std::vector<float>{-3, -3, -3});
  CHECK((*t.stored_row(4))[0] == 2);
  CHECK((*t.stored_row(4))[1] == 1);
  t.add({4}, {3, 0, 1, 1, 1});
  CHECK(t.pull({4}) == std::vector<float>{-2, -2, -2});
  CHECK((*t.stored_row(4))[0] == 5);
}

TEST_CASE("shrink: show and click decay, unseen rows age, expired rows are deleted and come back fresh") {
  SparseTableSpec spec = ctr_spec(3, 0.01f);
  spec.ctr.delete_after_unseen_days = 2;
  SparseTable t(spec, kUnused);
  const std::vector<float> initial = t.pull({1, 2, 3});
  t.push({1}, {10, 2, 1, 1, 1});   // score 0.8 + 2 = 2.8: decays and stays
  t.push({2}, {1, 0, 1, 1, 1});    // score 0.1: deleted at the first shrink
  t.push({3}, {0, 100, 1, 1, 1});  // score 100: deleted only once unseen for 3 shrinks
  auto first = t.shrink();
  CHECK(first.table == "ctr");
  CHECK(first.rows_before == 3);
  CHECK(first.rows_after == 2);
  CHECK((*t.stored_row(1))[0] == doctest::Approx(9.8f));
  CHECK((*t.stored_row(1))[1] == doctest::Approx(1.96f));
  CHECK((*t.stored_row(1))[2] == 0);  // pushed since the last shrink
  CHECK_FALSE(t.stored_row(2));
  CHECK(t.pull({2}) == std::vector<float>(initial.begin() + 3, initial.begin() + 6));
  t.push({1}, {0, 0, 0, 0, 0});
  t.shrink();
  CHECK((*t.stored_row(3))[2] == 1);
  CHECK((*t.stored_row(1))[2] == 0);
  t.shrink();
  CHECK((*t.stored_row(3))[2] == 2);
  auto last = t.shrink();  // row 3 unseen for 3 > 2 shrinks; row 1 for 2
  CHECK(last.rows_before == 2);
  CHECK(last.rows_after == 1);
  CHECK_FALSE(t.stored_row(3));
  CHECK(t.stored_row(1));
  t.push({3}, {1, 1, 0, 0, 0});  // back: from its initial values, with only this push's statistics
  CHECK(t.pull({3}) == std::vector<float>(initial.begin() + 6, initial.end()));
  CHECK((*t.stored_row(3))[1] == 1);
  CHECK((*t.stored_row(3))[2] == 0);
}

TEST_CASE("shrink: plain tables keep every row") {
  SparseTable t(2, UpdateRule::parse("sgd", 1.0f), 3);
  t.push({1, 2}, {1, 1, 1, 1});
  auto report = t.shrink();
  CHECK(report.rows_before == 2);
  CHECK(report.rows_after == 2);
}

TEST_CASE("admission by count: the row appears at the count-th push, earlier gradients dropped") {
  SparseTableSpec spec{.name = "counted", .dim = 2, .seed = 5};
  spec.admission.kind = AdmissionSpec::Kind::kCount;
  spec.admission.count = 3;
  SparseTable t(spec, UpdateRule::parse("sgd", 1.0f));
  const std::vector<float> initial = t.pull({9});
  const uint64_t empty_index = t.memory().index_bytes;
  t.push({9}, {100, 100});
  t.push({9}, {100, 100});
  CHECK(t.rows() == 0);
  CHECK(t.pull({9}) == initial);
  t.accumulate({9}, {1, 2});  // the third push: admitted
  CHECK(t.rows() == 1);
  t.apply_pending(1);
  CHECK(t.pull({9}) == std::vector<float>{initial[0] - 1, initial[1] - 2});
  std::vector<uint64_t> pending;
  for (uint64_t k = 100; k < 1100; ++k) pending.push_back(k);
  t.push(pending, std::vector<float>(pending.size() * 2, 1.0f));
  CHECK(t.rows() == 1);
  CHECK(t.memory().index_bytes > empty_index);  // the counters are counted
}

TEST_CASE("admission by probability: about p of the keys, the same keys for the same seed and pushes") {
  SparseTableSpec spec{.name = "sampled", .dim = 1, .seed = 5};
  spec.admission.kind = AdmissionSpec::Kind::kProbability;
  spec.admission.probability = 0.3f;
  SparseTable a(spec, UpdateRule::parse("sgd", 1.0f)), b(spec, UpdateRule::parse("sgd", 1.0f));
  spec.seed = 6;
  SparseTable c(spec, UpdateRule::parse("sgd", 1.0f));
  std::vector<uint64_t> keys;
  std::mt19937_64 rng(1);
  for (int i = 0; i < 10000; ++i) keys.push_back(rng());
  const std::vector<float> ones(keys.size(), 1.0f);
  for (SparseTable* t : {&a, &b, &c}) t->push(keys, ones);
  CHECK(a.rows() >= 2700);
  CHECK(a.rows() <= 3300);
  size_t same_in_b = 0, same_in_c = 0;
  for (uint64_t k : keys) {
    same_in_b += a.stored_row(k).has_value() == b.stored_row(k).has_value();
    same_in_c += a.stored_row(k).has_value() == c.stored_row(k).has_value();
  }
  CHECK(same_in_b == keys.size());
  CHECK(same_in_c < keys.size());
}

TEST_CASE("memory: a CTR row of dim 8 under adagrad costs at most 1.5x its raw bytes, allocated") {
  SparseTableSpec spec = ctr_spec(8);
  spec.ctr.embed_rule = SparseRuleSpec::parse("adagrad");
  spec.ctr.embedx_rule = SparseRuleSpec::parse("adagrad");
  SparseTable t(spec, kUnused);
  // key 8 + show, click, unseen_days, delta_score 16 + embed_w and its g2sum 8 + embedx 28 and its g2sum 4
  const double raw = 64;
  std::mt19937_64 rng(2);
  for (int batch = 0; batch < 30; ++batch) {
    std::vector<uint64_t> keys(10000);
    for (auto& k : keys) k = rng();
    t.push(keys, std::vector<float>(keys.size() * t.push_width(), 1.0f));
    const TableMemory m = t.memory();
    CHECK(m.rows == (batch + 1) * 10000u);
    const double per_row = static_cast<double>(m.value_bytes + m.index_bytes) / static_cast<double>(m.rows);
    CHECK(per_row <= 1.5 * raw);
  }
}
