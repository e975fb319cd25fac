#pragma once
// What a parameter server reports about its tables: the memory they hold (STATS) and what a
// shrink removed (SHRINK), as PROTOCOL.md carries them and ServerControl returns them.

#include <cstdint>
#include <string>
#include <vector>

namespace paddle::ps {

// One table's allocated memory. Sparse tables: rows stored; value_bytes, the row arenas
// (key, values, statistics, rule state, flags; pending gradients of the synchronous mode);
// index_bytes, the key index and the admission filter's counters. Dense tables: rows = values,
// value_bytes their values, rule state and pending gradients, index_bytes 0.
// A sparse table with a disk tier (StorageSpec::kSsd) also reports `tier`; `rows` then counts
// both tiers and value_bytes/index_bytes the memory one.
struct TierReport {
  bool tiered = false;
  uint64_t memory_rows = 0, disk_rows = 0;
  uint64_t disk_bytes = 0;       // the database's files
  uint64_t database_bytes = 0;   // RocksDB's own memory (memory tables, table readers)
  // Since the previous report of this table: the share of looked-up keys with a row found in
  // memory (a new key, in neither tier, is no miss), and
  // rows read from disk (and so moved into memory) and evicted to disk per second.
  double hit_rate = 0, disk_reads_per_s = 0, evictions_per_s = 0;
};

struct TableMemory {
  std::string table;
  uint64_t rows = 0, value_bytes = 0, index_bytes = 0;
  TierReport tier{};
};

struct ServerMemory {
  int server = 0;
  std::vector<TableMemory> tables;  // dense tables first, then sparse, in table order
};

struct TableShrink {
  std::string table;
  uint64_t rows_before = 0, rows_after = 0;
};

struct ShrinkReport {
  int server = 0;
  std::vector<TableShrink> tables;  // every sparse table, in table order
};

}  // namespace paddle::ps
