#include "ps/local_parameter_store.h"

#include "ps/table/checkpoint.h"

namespace paddle::ps {

LocalParameterStore::LocalParameterStore(TableSpecs specs)
    : specs_(std::move(specs)), tables_(build_local_tables(specs_)) {}

void LocalParameterStore::init_dense(uint32_t table, const std::vector<float>& values) {
  check_dense_length(specs_, table, values.size(), "init_dense");
  tables_.dense[table]->set(values);
}

std::vector<float> LocalParameterStore::pull_dense(uint32_t table) {
  dense_table(specs_, table, "pull_dense");
  return tables_.dense[table]->pull();
}

void LocalParameterStore::push_dense(uint32_t table, const std::vector<float>& grads) {
  check_dense_length(specs_, table, grads.size(), "push_dense");
  tables_.dense[table]->accumulate(grads);
}

std::vector<float> LocalParameterStore::pull_sparse(uint32_t table, const std::vector<uint64_t>& keys) {
  sparse_table(specs_, table, "pull_sparse");
  return tables_.sparse[table]->pull(keys);
}

void LocalParameterStore::push_sparse(uint32_t table, const std::vector<uint64_t>& keys,
                                      const std::vector<float>& grads) {
  check_sparse_length(specs_, table, keys.size(), grads.size(), "push_sparse");
  tables_.sparse[table]->accumulate(keys, grads);
}

void LocalParameterStore::add_dense(uint32_t table, const std::vector<float>& delta) {
  check_dense_length(specs_, table, delta.size(), "add_dense");
  tables_.dense[table]->add(delta);
}

void LocalParameterStore::add_sparse(uint32_t table, const std::vector<uint64_t>& keys,
                                     const std::vector<float>& delta) {
  check_sparse_length(specs_, table, keys.size(), delta.size(), "add_sparse");
  tables_.sparse[table]->add(keys, delta);
}

void LocalParameterStore::barrier() {
  for (auto& t : tables_.dense) t->apply_pending(1);
  for (auto& t : tables_.sparse) t->apply_pending(1);
  ++barriers_;
}

void LocalParameterStore::save(const std::string& dir, SaveMode mode) { save_checkpoint(dir, tables_, 0, 1, mode); }

std::vector<ShrinkReport> LocalParameterStore::shrink() { return {shrink_tables(tables_, 0)}; }

std::vector<ServerMemory> LocalParameterStore::memory() { return {tables_memory(tables_, 0)}; }

void LocalParameterStore::load(const std::string& dir) { load_checkpoint(dir, tables_, 0, 1); }

}  // namespace paddle::ps
