#pragma once
// ParameterStore: where a worker's parameters live, as the trainer sees them: on parameter
// servers (PsClient) or in this process (LocalParameterStore, the same tables without a
// network, for single-process training and for checking the servers against it). Only the verbs
// that carry values; barrier, save, load and stop are ServerControl's (ps/server_control.h).
//
// Tables are named by their id in the model's TableSpecs (ps/table_spec.h), which also give
// every dense table's size and every sparse table's dim: a dense call carries the whole table,
// and a sparse call keys.size() * dim values, row after row in the order of `keys`. A call
// with an unknown table or another length throws std::invalid_argument naming the call and the
// table before it changes anything.

#include <cstdint>
#include <span>
#include <vector>

namespace paddle::ps {

class ParameterStore {
 public:
  virtual ~ParameterStore() = default;
  virtual void init_dense(uint32_t table, const std::vector<float>& values) = 0;
  virtual std::vector<float> pull_dense(uint32_t table) = 0;
  // The same into a buffer the caller keeps from step to step (no fresh pages to zero and fault
  // in each time): `into` must hold the whole table.
  virtual void pull_dense_into(uint32_t table, std::span<float> into);
  virtual void push_dense(uint32_t table, const std::vector<float>& grads) = 0;
  // A key never pushed reads as its seeded initial row.
  virtual std::vector<float> pull_sparse(uint32_t table, const std::vector<uint64_t>& keys) = 0;
  virtual void push_sparse(uint32_t table, const std::vector<uint64_t>& keys, const std::vector<float>& grads) = 0;
  // GEO: add deltas to the values directly.
  virtual void add_dense(uint32_t table, const std::vector<float>& delta) = 0;
  virtual void add_sparse(uint32_t table, const std::vector<uint64_t>& keys, const std::vector<float>& delta) = 0;
  // A hint, sent ahead of the pull that needs them: `keys`' rows are wanted soon. Servers read the
  // rows of a table with a disk tier (ps/table/disk_tier.h) into memory while the worker goes on;
  // memory tables, and stores without servers, have nothing to do.
  virtual void prefetch_sparse(uint32_t /*table*/, const std::vector<uint64_t>& /*keys*/) {}
};

}  // namespace paddle::ps
