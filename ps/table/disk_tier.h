#pragma once
// DiskTier: the cold rows of one sparse table (ps/table/sparse_table.h), in a RocksDB database of the
// table's own directory. The table keeps its hot rows in memory and moves rows between the two
// (ps/tier_policy.h says which); a row is in exactly one of them at a time.
//
// Layout: one RocksDB key per row, the table key as 8 bytes big-endian (so a scan walks keys in
// order); the value is the stored row, `row_floats` floats in host order with the flags word last,
// exactly as a checkpoint holds it (ps/table/checkpoint.h). Nothing else is stored.
//
// The database holds rows of this process only: what must outlive it is in checkpoints. Opening a
// directory that holds an earlier run's database empties it; a directory holding anything else, or
// a database RocksDB cannot open, is refused (common::DataError naming the directory), so nothing
// of a user's is ever deleted. Writes go without RocksDB's write-ahead log for the same reason.
//
// Every failure is a DiskTierError naming the table and the directory: a full disk reads
// "sparse table embedding: the disk tier /data/ssd/server-0/embedding is full (...)", said by
// write() once under 64 MB are free, before RocksDB itself runs out. A server
// stops on one (ps/server/server.h): its tables are then no longer whole. Safe to call from several
// threads at once.

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/error.h"

namespace paddle::ps {

class DiskTierError : public common::DataError {
 public:
  using common::DataError::DataError;
};

class DiskTier {
 public:
  // Throws DiskTierError as the class comment says.
  DiskTier(std::string table, std::string dir, size_t row_floats);
  ~DiskTier();
  DiskTier(const DiskTier&) = delete;
  DiskTier& operator=(const DiskTier&) = delete;

  const std::string& dir() const { return dir_; }
  size_t row_floats() const { return row_floats_; }

  // The rows of `keys`, read together (one RocksDB MultiGet): found[i] says whether keys[i] has a
  // row here, and its floats are then at rows + i * row_floats().
  void read(std::span<const uint64_t> keys, float* rows, std::vector<char>& found);

  // Puts and deletes applied together by write(), in their order.
  class Batch {
   public:
    Batch();
    ~Batch();
    Batch(Batch&&) noexcept;
    void put(uint64_t key, const float* row, size_t row_floats);
    void erase(uint64_t key);
    size_t size() const;
    void clear();

   private:
    friend class DiskTier;
    struct Impl;
    std::unique_ptr<Impl> impl_;
  };
  void write(Batch& batch);

  // Calls visit(key, row) for every row, in key order, as of the call (a snapshot: writes made
  // meanwhile are not seen). `row` is valid during the call only.
  void scan(const std::function<void(uint64_t key, const float* row)>& visit);
  // Deletes every row.
  void clear();
  // Bytes the rows take on disk (SST files) and in RocksDB's memory tables.
  uint64_t disk_bytes();
  uint64_t memory_bytes();

 private:
  [[noreturn]] void fail(const std::string& what, const std::string& status) const;
  struct Db;
  std::string table_, dir_;
  size_t row_floats_;
  std::unique_ptr<Db> db_;
};

}  // namespace paddle::ps
