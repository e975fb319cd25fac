#pragma once
// ParameterStore: where a worker's parameters live, as the trainer sees them: on parameter
// servers (PsClient) or in this process (LocalParameterStore, the same tables without a
// network, for single-process training and for checking the servers against it).

#include <cstdint>
#include <string>
#include <vector>

namespace paddle::ps {

class ParameterStore {
 public:
  virtual ~ParameterStore() = default;
  virtual void init_dense(uint32_t table, const std::vector<float>& values) = 0;
  virtual std::vector<float> pull_dense(uint32_t table, size_t total) = 0;
  virtual void push_dense(uint32_t table, const std::vector<float>& grads) = 0;
  virtual std::vector<float> pull_sparse(uint32_t table, const std::vector<uint64_t>& keys, size_t dim) = 0;
  virtual void push_sparse(uint32_t table, const std::vector<uint64_t>& keys, const std::vector<float>& grads,
                           size_t dim) = 0;
  // GEO: add deltas to the values directly.
  virtual void add_dense(uint32_t table, const std::vector<float>& delta) = 0;
  virtual void add_sparse(uint32_t table, const std::vector<uint64_t>& keys, const std::vector<float>& delta,
                          size_t dim) = 0;
  // Synchronous mode: every worker's pushes of this step are applied when this returns.
  virtual void barrier() = 0;
};

}  // namespace paddle::ps
