#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "ps/client/async_communicator.h"
#include "tests/unit/ps/ps_test_support.h"

using namespace paddle::ps;
using namespace paddle::ps::testing;

namespace {

// Keeps what the communicator sends: the dense pushes, and per table each key's pushed rows.
struct Sent {
  std::mutex mutex;
  std::vector<std::vector<float>> dense;
  std::map<uint32_t, std::map<uint64_t, std::vector<std::vector<float>>>> sparse;
};

class RecordingStore : public ParameterStore {
 public:
  explicit RecordingStore(Sent& sent) : sent_(sent) {}
  void init_dense(uint32_t, const std::vector<float>&) override {}
  std::vector<float> pull_dense(uint32_t) override { return {}; }
  void push_dense(uint32_t, const std::vector<float>& grads) override {
    std::lock_guard lock(sent_.mutex);
    sent_.dense.push_back(grads);
  }
  std::vector<float> pull_sparse(uint32_t, const std::vector<uint64_t>&) override { return {}; }
  void push_sparse(uint32_t table, const std::vector<uint64_t>& keys, const std::vector<float>& grads) override {
    std::lock_guard lock(sent_.mutex);
    const size_t dim = grads.size() / keys.size();
    for (size_t i = 0; i < keys.size(); ++i)
      sent_.sparse[table][keys[i]].emplace_back(grads.begin() + static_cast<long>(i * dim),
                                                grads.begin() + static_cast<long>((i + 1) * dim));
  }
  void add_dense(uint32_t, const std::vector<float>&) override {}
  void add_sparse(uint32_t, const std::vector<uint64_t>&, const std::vector<float>&) override {}

 private:
  Sent& sent_;
};

}  // namespace

TEST_CASE("the async communicator sends each step's rows by the table's dim") {
  Sent sent;
  AsyncCommunicator async(std::make_unique<RecordingStore>(sent), small_specs(), 4, /*max_merge=*/1);
  StepGradients step;
  step.dense = std::vector<float>(10, 0.5f);
  step.sparse.push_back({0, {8, 2}, {1, 2, 3, 4, 5, 6}});
  step.sparse.push_back({1, {8, 2}, {7, 9}});
  async.push(step);
  async.flush();
  CHECK(async.merged_sends() == 1);
  CHECK(sent.dense == std::vector<std::vector<float>>{std::vector<float>(10, 0.5f)});
  CHECK(sent.sparse[0][8] == std::vector<std::vector<float>>{{1, 2, 3}});
  CHECK(sent.sparse[0][2] == std::vector<std::vector<float>>{{4, 5, 6}});
  CHECK(sent.sparse[1][8] == std::vector<std::vector<float>>{{7}});
  CHECK(sent.sparse[1][2] == std::vector<std::vector<float>>{{9}});
}

TEST_CASE("the async communicator refuses a step that does not fit the tables, on the caller's thread") {
  Sent sent;
  AsyncCommunicator async(std::make_unique<RecordingStore>(sent), small_specs(), 4, 1);
  StepGradients wrong_rows;
  wrong_rows.dense = std::vector<float>(10);
  wrong_rows.sparse.push_back({1, {1, 2, 3}, std::vector<float>(7)});
  CHECK_THROWS_WITH_AS(async.push(wrong_rows), "async push_sparse table 1 (wide): 7 values for 3 keys of dim 1",
                       std::invalid_argument);
  StepGradients unknown_table;
  unknown_table.dense = std::vector<float>(10);
  unknown_table.sparse.push_back({4, {1}, {1}});
  CHECK_THROWS_WITH_AS(async.push(unknown_table),
                       "async push_sparse: no sparse table 4; the model has 2 (embedding, wide)",
                       std::invalid_argument);
  async.flush();
  CHECK(async.merged_sends() == 0);
  CHECK(sent.dense.empty());
}
