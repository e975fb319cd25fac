#pragma once
// The tables a parameter server holds.
//
// DenseTable: one contiguous block of the model's dense parameters (the whole dense vector is
// cut into one block per server). SparseTable: uint64 key -> row of `dim` floats, split into
// shards by key % shard_count, each shard with its own lock; a row is created on its first push
// with a uniform init seeded by (seed, key), so every server and a local process create the same
// row; pulling an unknown key gives the values it would be created with, without creating it
// (so evaluation does not grow the table, and GEO's local copies start where the servers' rows do).
//
// Both take gradients either to apply at once (push) or to accumulate until apply_pending(n),
// which applies the sum divided by n: the synchronous mode's "average over the workers".

#include <cstdint>
#include <istream>
#include <memory>
#include <mutex>
#include <ostream>
#include <unordered_map>
#include <vector>

#include "ps/update_rule.h"

namespace paddle::ps {

class DenseTable {
 public:
  DenseTable(size_t size, UpdateRule rule);

  size_t size() const { return values_.size(); }
  void set(const std::vector<float>& values);  // throws std::invalid_argument on a size mismatch
  std::vector<float> pull();
  void push(const std::vector<float>& grads);
  void accumulate(const std::vector<float>& grads);
  void apply_pending(int divisor);
  void add(const std::vector<float>& delta);  // GEO: values += delta

  void save(std::ostream& out);
  void load(std::istream& in);  // throws std::runtime_error when truncated

 private:
  void check_size(size_t n, const char* what) const;

  UpdateRule rule_;
  std::mutex mutex_;
  std::vector<float> values_, state_, pending_;
  bool has_pending_ = false;
  int64_t steps_ = 0;
};

class SparseTable {
 public:
  SparseTable(size_t dim, UpdateRule rule, uint64_t seed, float init_range = 0.01f, size_t shards = 16);

  size_t dim() const { return dim_; }
  size_t rows();
  std::vector<float> pull(const std::vector<uint64_t>& keys);  // keys.size() * dim values
  void push(const std::vector<uint64_t>& keys, const std::vector<float>& grads);
  void accumulate(const std::vector<uint64_t>& keys, const std::vector<float>& grads);
  void apply_pending(int divisor);
  void add(const std::vector<uint64_t>& keys, const std::vector<float>& delta);  // GEO; creates rows

  void save(std::ostream& out);
  void load(std::istream& in);

 private:
  struct Row {
    std::vector<float> values;  // dim values, then rule state
    int64_t steps = 0;
  };
  struct Shard {
    std::mutex mutex;
    std::unordered_map<uint64_t, Row> rows;
    std::unordered_map<uint64_t, std::vector<float>> pending;
  };
  Shard& shard_of(uint64_t key) { return shards_[key % shards_.size()]; }
  Row& row(Shard& shard, uint64_t key);  // creates on first use; caller holds the shard's lock
  void initial_values(uint64_t key, float* out) const;  // dim floats
  void check_sizes(const std::vector<uint64_t>& keys, const std::vector<float>& grads) const;

  size_t dim_;
  UpdateRule rule_;
  uint64_t seed_;
  float init_range_;
  std::vector<Shard> shards_;
};

// One server's share of a model's tables, or all of them in one process (table_spec.h builds both).
struct ServerTables {
  std::vector<std::unique_ptr<DenseTable>> dense;    // by table id: this server's block
  std::vector<std::unique_ptr<SparseTable>> sparse;  // by table id
};

}  // namespace paddle::ps
