#include "ps/table_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

#include "ps/sharding.h"
#include "ps/update_rule.h"

namespace paddle::ps {

ServerTables build_server_tables(const TableSpecs& specs, int index, int count) {
  UpdateRule rule = UpdateRule::parse(specs.update_rule, specs.learning_rate);
  rule.momentum = specs.momentum;
  rule.weight_decay = specs.weight_decay;
  ServerTables tables;
  for (const DenseTableSpec& d : specs.dense) {
    auto [begin, end] = dense_block(d.size, static_cast<size_t>(count), static_cast<size_t>(index));
    tables.dense.push_back(std::make_unique<DenseTable>(end - begin, rule));
    tables.dense_names.push_back(d.name);
  }
  for (const SparseTableSpec& s : specs.sparse) {
    tables.sparse.push_back(std::make_unique<SparseTable>(s, rule));
  }
  return tables;
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
