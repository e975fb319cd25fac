#include "ps/table_spec.h"

#include "ps/sharding.h"
#include "ps/update_rule.h"

namespace paddle::ps {

ServerTables build_server_tables(const TableSpecs& specs, int index, int count) {
  const UpdateRule rule = UpdateRule::parse(specs.update_rule, specs.learning_rate);
  ServerTables tables;
  for (const DenseTableSpec& d : specs.dense) {
    auto [begin, end] = dense_block(d.size, static_cast<size_t>(count), static_cast<size_t>(index));
    tables.dense.push_back(std::make_unique<DenseTable>(end - begin, rule));
  }
  for (const SparseTableSpec& s : specs.sparse)
    tables.sparse.push_back(std::make_unique<SparseTable>(s.dim, rule, s.seed));
  return tables;
}

}  // namespace paddle::ps
