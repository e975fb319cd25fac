#pragma once
// TableSpecs: what a model says about the tables it keeps on parameter servers, and the one
// place that turns that description into a server's share. A model names its tables by id (the
// index in `dense` or `sparse`), sizes and dims, the rule the servers update them with, and the
// seed of the sparse rows' initialization; it never builds tables itself.
//
// Sharding: a dense table of N values is cut into one contiguous block per server
// (ps/sharding.h dense_block); every server holds every sparse table, and a key lives on the
// server server_of_key(key) picks, so a sparse table needs no size.

#include <cstdint>
#include <string>
#include <vector>

#include "ps/server.h"

namespace paddle::ps {

struct DenseTableSpec {
  std::string name;
  size_t size = 0;
};

struct SparseTableSpec {
  std::string name;
  size_t dim = 0;
  uint64_t seed = 0;
};

struct TableSpecs {
  std::vector<DenseTableSpec> dense;    // by table id
  std::vector<SparseTableSpec> sparse;  // by table id
  std::string update_rule = "sgd";      // ps/update_rule.h names
  float learning_rate = 0.01f;
};

// The tables server `index` of `count` holds. Throws common::ConfigError for an unknown rule.
ServerTables build_server_tables(const TableSpecs& specs, int index, int count);

// All the tables in one process (a single-process job, and the reference the servers are
// tested against): the share of server 0 of 1.
inline ServerTables build_local_tables(const TableSpecs& specs) { return build_server_tables(specs, 0, 1); }

}  // namespace paddle::ps
