#pragma once
// TableSpecs: what a model says about the tables it keeps on parameter servers, and the one
// place that turns that description into a server's share. A model names its tables by id (the
// index in `dense` or `sparse`), sizes and dims, the rule the servers update them with, and the
// seed of the sparse rows' initialization; it never builds tables itself.
//
// Sharding: a dense table of N values is cut into one contiguous block per server
// (ps/wire/sharding.h dense_block); every server holds every sparse table, and a key lives on the
// server server_of_key(key) picks, and a sparse table needs no size: it grows as keys arrive
// (ps/table/sparse_table_spec.h).
//
// Both parameter stores check every call against the specs before it touches a table, so a
// wrong table id or length fails alike on servers and locally, naming the call and the table.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/optimizer_kind.h"
#include "ps/table/sparse_table_spec.h"
#include "ps/table/tables.h"

namespace paddle::ps {

struct DenseTableSpec {
  std::string name;
  size_t size = 0;
};

struct TableSpecs {
  std::vector<DenseTableSpec> dense;    // by table id
  std::vector<SparseTableSpec> sparse;  // by table id
  // The rule of plain sparse tables and dense tables: one of ps/table/update_rule.h's kinds().
  common::OptimizerKind update_rule = common::OptimizerKind::kSgd;
  float learning_rate = 0.01f;
  float momentum = 0.9f;  // the momentum rule's mu
  float weight_decay = 0.0f;
  // StorageSpec::kSsd sparse tables: each server's memory for their rows, shared among them in
  // proportion to their row sizes (so they hold as many rows each), and the directory under which
  // server i keeps table T's disk tier, ssd_dir/server-i/T. build_server_tables fills each table's
  // StorageSpec::dir and memory_rows from these.
  uint64_t memory_budget_bytes = 0;  // ps.memory_budget_mb
  std::string ssd_dir;
  // The most keys of one table one request carries (a batch's), when known: a budget holding fewer
  // rows is refused.
  uint64_t batch_keys = 0;
};

// The tables' StorageSpecs as build_server_tables(specs, index, count) makes them. Throws
// common::ConfigError naming ps.memory_budget_mb (ps.ssd_dir) when tiered tables have no budget
// (directory), or a budget that cannot hold batch_keys rows of each.
std::vector<StorageSpec> server_storage(const TableSpecs& specs, int index);

// The tables server `index` of `count` holds. Throws common::ConfigError for an unknown rule.
ServerTables build_server_tables(const TableSpecs& specs, int index, int count);

// All the tables in one process (a single-process job, and the reference the servers are
// tested against): the share of server 0 of 1.
inline ServerTables build_local_tables(const TableSpecs& specs) { return build_server_tables(specs, 0, 1); }

// The spec of dense (sparse) table `table`; throws std::invalid_argument naming `call` (such as
// "pull_dense") and the table id when the model has no such table.
const DenseTableSpec& dense_table(const TableSpecs& specs, uint32_t table, std::string_view call);
const SparseTableSpec& sparse_table(const TableSpecs& specs, uint32_t table, std::string_view call);

// Throw std::invalid_argument naming the call and the table unless `values` is the dense
// table's size, or `keys` times the sparse table's push_width (dim, or 2 + dim for a CTR table):
// "push_sparse table 1 (wide): 7 values for 3 keys of dim 1".
void check_dense_length(const TableSpecs& specs, uint32_t table, size_t values, std::string_view call);
void check_sparse_length(const TableSpecs& specs, uint32_t table, size_t keys, size_t values, std::string_view call);

}  // namespace paddle::ps
