#pragma once
// LocalParameterStore: the server tables in this process, with the synchronous semantics of one
// worker: pushes accumulate and barrier() applies them.

#include <memory>
#include <vector>

#include "ps/parameter_store.h"
#include "ps/tables.h"

namespace paddle::ps {

class LocalParameterStore : public ParameterStore {
 public:
  LocalParameterStore(std::vector<std::unique_ptr<DenseTable>> dense, std::vector<std::unique_ptr<SparseTable>> sparse)
      : dense_(std::move(dense)), sparse_(std::move(sparse)) {}

  void init_dense(uint32_t table, const std::vector<float>& values) override { dense_.at(table)->set(values); }
  std::vector<float> pull_dense(uint32_t table, size_t) override { return dense_.at(table)->pull(); }
  void push_dense(uint32_t table, const std::vector<float>& grads) override { dense_.at(table)->accumulate(grads); }
  std::vector<float> pull_sparse(uint32_t table, const std::vector<uint64_t>& keys, size_t) override {
    return sparse_.at(table)->pull(keys);
  }
  void push_sparse(uint32_t table, const std::vector<uint64_t>& keys, const std::vector<float>& grads,
                   size_t) override {
    sparse_.at(table)->accumulate(keys, grads);
  }
  void add_dense(uint32_t table, const std::vector<float>& delta) override { dense_.at(table)->add(delta); }
  void add_sparse(uint32_t table, const std::vector<uint64_t>& keys, const std::vector<float>& delta,
                  size_t) override {
    sparse_.at(table)->add(keys, delta);
  }
  void barrier() override {
    for (auto& t : dense_) t->apply_pending(1);
    for (auto& t : sparse_) t->apply_pending(1);
  }

 private:
  std::vector<std::unique_ptr<DenseTable>> dense_;
  std::vector<std::unique_ptr<SparseTable>> sparse_;
};

}  // namespace paddle::ps
