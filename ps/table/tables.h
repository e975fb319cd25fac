#pragma once
// The tables a parameter server holds.
//
// DenseTable: one contiguous block of the model's dense parameters (the whole dense vector is
// cut into one block per server). SparseTable (ps/table/sparse_table.h): uint64 key -> row.
//
// Both take gradients either to apply at once (push) or to accumulate until apply_pending(n),
// which applies the sum divided by n: the synchronous mode's "average over the workers".

#include <cstdint>
#include <istream>
#include <memory>
#include <mutex>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "ps/table/sparse_table.h"
#include "ps/table/table_reports.h"
#include "ps/table/update_rule.h"

namespace paddle::ps {

// Calls taking spans also take vectors (and braced lists, through the vector overloads).
class DenseTable {
 public:
  DenseTable(size_t size, UpdateRule rule);

  size_t size() const { return values_.size(); }
  void set(std::span<const float> values);  // throws std::invalid_argument on a size mismatch
  std::vector<float> pull();
  void pull(size_t begin, size_t count, float* out);  // values [begin, begin + count)
  void push(std::span<const float> grads);
  void accumulate(std::span<const float> grads);
  void apply_pending(int divisor);
  void add(std::span<const float> delta);  // GEO: values += delta
  void set(const std::vector<float>& values) { set(std::span<const float>(values)); }
  void push(const std::vector<float>& grads) { push(std::span<const float>(grads)); }
  void accumulate(const std::vector<float>& grads) { accumulate(std::span<const float>(grads)); }
  void add(const std::vector<float>& delta) { add(std::span<const float>(delta)); }

  void save(std::ostream& out);
  void load(std::istream& in);  // throws std::runtime_error when truncated
  TableMemory memory(const std::string& name);

 private:
  void check_size(size_t n, const char* what) const;

  UpdateRule rule_;
  std::mutex mutex_;
  std::vector<float> values_, state_, pending_;
  bool has_pending_ = false;
  int64_t steps_ = 0;
};

// One server's share of a model's tables, or all of them in one process (table_spec.h builds both).
struct ServerTables {
  std::vector<std::unique_ptr<DenseTable>> dense;    // by table id: this server's block
  std::vector<std::unique_ptr<SparseTable>> sparse;  // by table id
  std::vector<std::string> dense_names;              // by table id, where known (reports)
};

// Shrinks every sparse table (SparseTable::shrink) of server `server`.
ShrinkReport shrink_tables(ServerTables& tables, int server);
// The memory of every table of server `server`, dense first.
ServerMemory tables_memory(ServerTables& tables, int server);
// One line for a server log: "server 0 memory: T rows R, values V MiB, index I MiB; ...".
std::string describe(const ServerMemory& memory);
// One line for a worker's log: "server 0: embedding 4997 -> 1790 rows wide 4997 -> 1790 rows".
std::string describe(const ShrinkReport& report);

}  // namespace paddle::ps
