#pragma once
// LocalParameterStore: the tables of a model in this process, with the synchronous semantics of
// one worker and one server: pushes accumulate and barrier() applies them. save() and load()
// write and read the checkpoint of server 0 of 1 (ps/table/checkpoint.h), so a single process and a
// one-server job can resume from each other's; stop_worker() has nobody to tell.

#include <string>

#include "ps/parameter_store.h"
#include "ps/server_control.h"
#include "ps/table_spec.h"

namespace paddle::ps {

class LocalParameterStore : public ParameterStore, public ServerControl {
 public:
  // Builds all of `specs`' tables; throws common::ConfigError for an unknown update rule.
  explicit LocalParameterStore(TableSpecs specs);

  void init_dense(uint32_t table, const std::vector<float>& values) override;
  std::vector<float> pull_dense(uint32_t table) override;
  void push_dense(uint32_t table, const std::vector<float>& grads) override;
  std::vector<float> pull_sparse(uint32_t table, const std::vector<uint64_t>& keys) override;
  void push_sparse(uint32_t table, const std::vector<uint64_t>& keys, const std::vector<float>& grads) override;
  void add_dense(uint32_t table, const std::vector<float>& delta) override;
  void add_sparse(uint32_t table, const std::vector<uint64_t>& keys, const std::vector<float>& delta) override;

  void barrier() override;
  uint64_t barriers_completed() const override { return barriers_; }
  void rejoin() override {}  // one process: nothing left behind to drop
  using ServerControl::save;
  void save(const std::string& dir, SaveMode mode) override;
  std::vector<ShrinkReport> shrink() override;
  std::vector<ServerMemory> memory() override;
  void load(const std::string& dir) override;
  void stop_worker() override {}

 private:
  TableSpecs specs_;
  ServerTables tables_;
  uint64_t barriers_ = 0;
};

}  // namespace paddle::ps
