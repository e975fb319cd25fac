#include <doctest/doctest.h>

#include "ps/table/checkpoint.h"
#include "ps/client/client.h"
#include "ps/local_parameter_store.h"
#include "ps/table/tables.h"
#include "tests/unit/ps/ps_test_support.h"

using namespace paddle::ps;
using namespace paddle::ps::testing;

TEST_CASE("the local store checks calls against its tables as the client does") {
  LocalParameterStore store(small_specs());
  CHECK_THROWS_WITH_AS(store.push_sparse(1, {5, 6, 7}, std::vector<float>(7, 1.0f)),
                       "push_sparse table 1 (wide): 7 values for 3 keys of dim 1", std::invalid_argument);
  CHECK_THROWS_WITH_AS(store.add_dense(0, {1, 2}), "add_dense table 0 (weights): 2 values, the table has 10",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(store.pull_sparse(7, {1}), "pull_sparse: no sparse table 7; the model has 2 (embedding, wide)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(store.init_dense(3, {1}), "init_dense: no dense table 3; the model has 1 (weights)",
                       std::invalid_argument);
}

TEST_CASE("the local store applies a step's pushes at the barrier") {
  LocalParameterStore store(small_specs());
  store.init_dense(0, std::vector<float>(10, 1.0f));
  store.push_dense(0, std::vector<float>(10, 2.0f));
  store.push_sparse(0, {4}, {1.0f, 2.0f, 3.0f});
  CHECK(store.pull_dense(0) == std::vector<float>(10, 1.0f));
  const std::vector<float> initial = store.pull_sparse(0, {4});  // the push waits for the barrier
  CHECK(initial == SparseTable(3, UpdateRule::parse("sgd", 0.5f), 42).pull({4}));
  store.barrier();
  CHECK(store.pull_dense(0) == std::vector<float>(10, 0.0f));  // 1 - 0.5 * 2
  SparseTable reference(3, UpdateRule::parse("sgd", 0.5f), 42);
  reference.push({4}, {1.0f, 2.0f, 3.0f});
  CHECK(store.pull_sparse(0, {4}) == reference.pull({4}));
}

TEST_CASE("the local store saves its tables, and fresh ones load the same values") {
  const auto dir = scratch_dir("local-store-checkpoint").string();
  LocalParameterStore trained(small_specs());
  std::vector<float> dense(10);
  for (size_t i = 0; i < dense.size(); ++i) dense[i] = 0.25f * static_cast<float>(i);
  trained.init_dense(0, dense);
  trained.push_sparse(0, {3, 99}, {1, 2, 3, 4, 5, 6});
  trained.push_sparse(1, {3}, {8});
  trained.barrier();
  trained.save(dir);
  const auto embedding = trained.pull_sparse(0, {3, 99, 1000}), wide = trained.pull_sparse(1, {3});
  REQUIRE(embedding.size() == 9);
  // Key 1000 was never pushed: it reads as its seeded init.
  const std::vector<float> never_pushed = SparseTable(3, UpdateRule::parse("sgd", 0.5f), 42).pull({1000});
  CHECK(std::vector<float>(embedding.begin() + 6, embedding.end()) == never_pushed);

  LocalParameterStore fresh(small_specs());
  fresh.load(dir);
  CHECK(fresh.pull_dense(0) == dense);
  CHECK(fresh.pull_sparse(0, {3, 99, 1000}) == embedding);
  CHECK(fresh.pull_sparse(1, {3}) == wide);

  SUBCASE("a one-server job starts from a single process's checkpoint") {
    ServerTables tables = small_tables();
    load_checkpoint(dir, tables, /*server_index=*/0, /*server_count=*/1);
    RunningServer running(ServerOptions{}, std::move(tables));
    PsClient client({running.endpoint()}, small_specs(), quick());
    CHECK(client.pull_dense(0) == dense);
    CHECK(client.pull_sparse(0, {3, 99, 1000}) == embedding);
    CHECK(client.pull_sparse(1, {3}) == wide);
  }
  SUBCASE("another model's tables refuse it, naming the table") {
    LocalParameterStore other(small_specs(11));
    CHECK_THROWS_WITH_AS(other.load(dir), doctest::Contains("dense table 0 has 10 values, the model 11"),
                         std::runtime_error);
  }
}
