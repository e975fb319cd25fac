#include "ps/table_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "common/error.h"
#include "ps/wire/sharding.h"
#include "ps/table/update_rule.h"

namespace paddle::ps {

ServerTables build_server_tables(const TableSpecs& specs, int index, int count) {
  UpdateRule rule = UpdateRule::of(specs.update_rule, specs.learning_rate);
  rule.momentum = specs.momentum;
  rule.weight_decay = specs.weight_decay;
  ServerTables tables;
  for (const DenseTableSpec& d : specs.dense) {
    auto [begin, end] = dense_block(d.size, static_cast<size_t>(count), static_cast<size_t>(index));
    tables.dense.push_back(std::make_unique<DenseTable>(end - begin, rule));
    tables.dense_names.push_back(d.name);
  }
  const std::vector<StorageSpec> storage = server_storage(specs, index);
  for (size_t t = 0; t < specs.sparse.size(); ++t) {
    SparseTableSpec s = specs.sparse[t];
    s.storage = storage[t];
    tables.sparse.push_back(std::make_unique<SparseTable>(std::move(s), rule));
  }
  return tables;
}

std::vector<StorageSpec> server_storage(const TableSpecs& specs, int index) {
  std::vector<StorageSpec> storage;
  const UpdateRule rule = UpdateRule::of(specs.update_rule, specs.learning_rate);
  uint64_t tiered_row_bytes = 0;  // one row of every tiered table
  for (const SparseTableSpec& s : specs.sparse) {
    storage.push_back(s.storage);
    if (s.storage.kind == StorageSpec::Kind::kSsd) tiered_row_bytes += SparseTable::memory_row_bytes(s, rule);
  }
  if (tiered_row_bytes == 0) return storage;
  if (specs.memory_budget_bytes == 0)
    throw common::ConfigError("ps.memory_budget_mb: sparse tables on ssd need a memory budget for their hot rows (MB per server)");
  if (specs.ssd_dir.empty()) throw common::ConfigError("ps.ssd_dir: sparse tables on ssd need a directory for their disk tier");
  const uint64_t rows = specs.memory_budget_bytes / tiered_row_bytes;
  constexpr uint64_t kShards = 16;  // SparseTable's
  const uint64_t needed = std::max(specs.batch_keys, kShards);
  if (rows < needed) {
    constexpr double kMiB = 1 << 20;
    throw common::ConfigError(fmt::format(
        "ps.memory_budget_mb: {:.3g} MB holds {} rows of each table on ssd, fewer than {} ({}); at least {:.3g} MB is needed",
        static_cast<double>(specs.memory_budget_bytes) / kMiB, rows, needed,
        specs.batch_keys > kShards ? "the keys of one batch" : "one per shard",
        static_cast<double>(needed * tiered_row_bytes) / kMiB));
  }
  for (size_t t = 0; t < specs.sparse.size(); ++t) {
    if (storage[t].kind != StorageSpec::Kind::kSsd) continue;
    const std::string name = specs.sparse[t].name.empty() ? fmt::format("table{}", t) : specs.sparse[t].name;
    storage[t].dir = (std::filesystem::path(specs.ssd_dir) / fmt::format("server-{}", index) / name).string();
    storage[t].memory_rows = rows;
  }
  return storage;
}

namespace {

template <typename Spec>
const Spec& table_spec(const std::vector<Spec>& tables, uint32_t table, std::string_view kind, std::string_view call) {
  if (table < tables.size()) return tables[table];
  std::vector<std::string> names;
  for (const Spec& t : tables) names.push_back(t.name);
  throw std::invalid_argument(fmt::format("{}: no {} table {}; the model has {} ({})", call, kind, table, tables.size(),
                                          fmt::join(names, ", ")));
}

}  // namespace

const DenseTableSpec& dense_table(const TableSpecs& specs, uint32_t table, std::string_view call) {
  return table_spec(specs.dense, table, "dense", call);
}

const SparseTableSpec& sparse_table(const TableSpecs& specs, uint32_t table, std::string_view call) {
  return table_spec(specs.sparse, table, "sparse", call);
}

void check_dense_length(const TableSpecs& specs, uint32_t table, size_t values, std::string_view call) {
  const DenseTableSpec& spec = dense_table(specs, table, call);
  if (values != spec.size)
    throw std::invalid_argument(
        fmt::format("{} table {} ({}): {} values, the table has {}", call, table, spec.name, values, spec.size));
}

void check_sparse_length(const TableSpecs& specs, uint32_t table, size_t keys, size_t values, std::string_view call) {
  const SparseTableSpec& spec = sparse_table(specs, table, call);
  const size_t width = push_width(spec);
  if (values == keys * width) return;
  if (width == spec.dim)
    throw std::invalid_argument(fmt::format("{} table {} ({}): {} values for {} keys of dim {}", call, table, spec.name,
                                            values, keys, spec.dim));
  throw std::invalid_argument(fmt::format("{} table {} ({}): {} values for {} keys of dim {}: a CTR table takes {} per "
                                          "key (show, click, then the gradients)", call, table, spec.name, values, keys,
                                          spec.dim, width));
}

}  // namespace paddle::ps
