#include "runtime/distributed/ps_step.h"

#include <stdexcept>
#include <unordered_map>

namespace paddle::runtime {

PsValues pull_values(ps::ParameterStore& store, size_t dense_tables, std::vector<std::vector<uint64_t>> keys) {
  PsValues values;
  for (uint32_t t = 0; t < dense_tables; ++t) values.dense.push_back(store.pull_dense(t));
  for (uint32_t t = 0; t < keys.size(); ++t) values.sparse.push_back(store.pull_sparse(t, keys[t]));
  values.keys = std::move(keys);
  return values;
}

namespace {

void prefetch_rows(ps::ParameterStore& store, const std::vector<std::vector<uint64_t>>& keys) {
  for (uint32_t t = 0; t < keys.size(); ++t) store.prefetch_sparse(t, keys[t]);
}

class SyncStep : public PsStep {
 public:
  SyncStep(Fleet& fleet, const ps::TableSpecs& tables) : fleet_(fleet), tables_(tables) {}
  PsValues fetch(std::vector<std::vector<uint64_t>> keys) override {
    return pull_values(fleet_.parameter_store(), tables_.dense.size(), std::move(keys));
  }
  void apply(PsValues grads) override {
    ps::ParameterStore& store = fleet_.parameter_store();
    for (uint32_t t = 0; t < grads.dense.size(); ++t) store.push_dense(t, grads.dense[t]);
    for (uint32_t t = 0; t < grads.keys.size(); ++t) store.push_sparse(t, grads.keys[t], grads.sparse[t]);
    fleet_.ps_barrier();
    ++acknowledged_;
  }
  uint64_t acknowledged_steps() override { return acknowledged_; }
  void prefetch(const std::vector<std::vector<uint64_t>>& keys) override { prefetch_rows(fleet_.parameter_store(), keys); }

 private:
  Fleet& fleet_;
  const ps::TableSpecs tables_;
  uint64_t acknowledged_ = 0;
};

class AsyncStep : public PsStep {
 public:
  AsyncStep(Fleet& fleet, const ps::TableSpecs& tables) : fleet_(fleet), tables_(tables) {
    if (tables.dense.size() > 1) throw std::invalid_argument("async parameter-server mode sends one dense table");
  }
  PsValues fetch(std::vector<std::vector<uint64_t>> keys) override {
    return pull_values(fleet_.parameter_store(), tables_.dense.size(), std::move(keys));
  }
  void apply(PsValues grads) override {
    ps::StepGradients step;
    if (!grads.dense.empty()) step.dense = std::move(grads.dense[0]);
    for (uint32_t t = 0; t < grads.keys.size(); ++t)
      step.sparse.push_back({t, std::move(grads.keys[t]), std::move(grads.sparse[t])});
    fleet_.async_communicator()->push(std::move(step));
  }
  void flush() override { fleet_.async_communicator()->flush(); }
  uint64_t acknowledged_steps() override { return fleet_.async_communicator()->acknowledged_steps(); }
  void prefetch(const std::vector<std::vector<uint64_t>>& keys) override { prefetch_rows(fleet_.parameter_store(), keys); }

 private:
  Fleet& fleet_;
  const ps::TableSpecs tables_;
};

// GEO's local copies: the dense tables and the sparse rows this worker touched in the window,
// each with the values last pulled (the base its delta is taken from).
class GeoStep : public PsStep {
 public:
  GeoStep(Fleet& fleet, const ps::TableSpecs& tables, float lr, int k_steps)
      : fleet_(fleet), tables_(tables), lr_(lr), k_steps_(k_steps), rows_(tables.sparse.size()) {
    refresh_dense();
  }

  PsValues fetch(std::vector<std::vector<uint64_t>> keys) override {
    ps::ParameterStore& store = fleet_.parameter_store();
    PsValues values;
    values.dense = dense_;
    for (uint32_t t = 0; t < keys.size(); ++t) {
      auto& cache = rows_.at(t);
      const size_t dim = tables_.sparse.at(t).dim;
      std::vector<uint64_t> missing;
      for (uint64_t k : keys[t])
        if (!cache.count(k)) missing.push_back(k);
      if (!missing.empty()) {
        const std::vector<float> pulled = store.pull_sparse(t, missing);
        for (size_t i = 0; i < missing.size(); ++i) {
          std::vector<float> row(pulled.begin() + static_cast<long>(i * dim), pulled.begin() + static_cast<long>((i + 1) * dim));
          cache[missing[i]] = {row, row};
        }
      }
      std::vector<float> out;
      out.reserve(keys[t].size() * dim);
      for (uint64_t k : keys[t]) out.insert(out.end(), cache[k].local.begin(), cache[k].local.end());
      values.sparse.push_back(std::move(out));
    }
    values.keys = std::move(keys);
    return values;
  }

  void apply(PsValues grads) override {
    for (size_t t = 0; t < grads.dense.size(); ++t)
      for (size_t i = 0; i < dense_[t].size(); ++i) dense_[t][i] -= lr_ * grads.dense[t][i];
    for (uint32_t t = 0; t < grads.keys.size(); ++t) {
      const size_t dim = tables_.sparse.at(t).dim, width = ps::push_width(tables_.sparse.at(t)), stats = width - dim;
      for (size_t i = 0; i < grads.keys[t].size(); ++i) {
        Row& row = rows_[t][grads.keys[t][i]];
        const float* pushed = grads.sparse[t].data() + i * width;
        if (stats) {
          row.show += pushed[0];
          row.click += pushed[1];
        }
        for (size_t d = 0; d < dim; ++d) row.local[d] -= lr_ * pushed[stats + d];
      }
    }
    if (++window_ >= k_steps_) send_deltas();
  }

  void flush() override {
    if (window_ > 0) send_deltas();
  }
  uint64_t acknowledged_steps() override { return acknowledged_; }

 private:
  struct Row {
    std::vector<float> local, base;
    float show = 0, click = 0;  // of the window, for tables that keep statistics
  };

  // Sends (local - base) / workers and starts a new window from the servers' values.
  void send_deltas() {
    ps::ParameterStore& store = fleet_.parameter_store();
    const float workers = static_cast<float>(fleet_.worker_num());
    for (uint32_t t = 0; t < dense_.size(); ++t) {
      std::vector<float> delta(dense_[t].size());
      for (size_t i = 0; i < delta.size(); ++i) delta[i] = (dense_[t][i] - dense_base_[t][i]) / workers;
      store.add_dense(t, delta);
    }
    for (uint32_t t = 0; t < rows_.size(); ++t) {
      const bool stats = ps::push_width(tables_.sparse.at(t)) > tables_.sparse.at(t).dim;
      std::vector<uint64_t> keys;
      std::vector<float> delta;
      for (auto& [key, row] : rows_[t]) {
        keys.push_back(key);
        if (stats) delta.insert(delta.end(), {row.show, row.click});  // counts add up over the workers
        for (size_t i = 0; i < row.local.size(); ++i) delta.push_back((row.local[i] - row.base[i]) / workers);
      }
      store.add_sparse(t, keys, delta);
      rows_[t].clear();
    }
    acknowledged_ += static_cast<uint64_t>(window_);
    window_ = 0;
    refresh_dense();
  }

  void refresh_dense() {
    dense_.clear();
    for (uint32_t t = 0; t < tables_.dense.size(); ++t) dense_.push_back(fleet_.parameter_store().pull_dense(t));
    dense_base_ = dense_;
  }

  Fleet& fleet_;
  const ps::TableSpecs tables_;
  const float lr_;
  const int k_steps_;
  int window_ = 0;
  uint64_t acknowledged_ = 0;
  std::vector<std::vector<float>> dense_, dense_base_;
  std::vector<std::unordered_map<uint64_t, Row>> rows_;  // by sparse table id
};

}  // namespace

std::unique_ptr<PsStep> make_ps_step(Fleet& fleet, const ps::TableSpecs& tables, float local_lr) {
  switch (fleet.strategy().ps.mode) {
    case PsMode::kSync: return std::make_unique<SyncStep>(fleet, tables);
    case PsMode::kAsync: return std::make_unique<AsyncStep>(fleet, tables);
    case PsMode::kGeo: return std::make_unique<GeoStep>(fleet, tables, local_lr, fleet.strategy().ps.k_steps);
  }
  throw std::logic_error("make_ps_step: unknown PsMode");
}

}  // namespace paddle::runtime
