#include "ps/table/disk_tier.h"

#include <fmt/format.h>
#include <rocksdb/db.h>
#include <sys/statvfs.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>
#include <rocksdb/perf_level.h>
#include <rocksdb/slice.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cstring>
#include <filesystem>


namespace paddle::ps {
namespace {

namespace fs = std::filesystem;

// Free space a write leaves RocksDB: two memory tables to flush, and room for a compaction.
constexpr uint64_t kReserveBytes = uint64_t{64} << 20;

void encode(uint64_t key, char* out) {
  for (int i = 7; i >= 0; --i, key >>= 8) out[i] = static_cast<char>(key & 0xff);
}

uint64_t decode(const rocksdb::Slice& s) {
  uint64_t key = 0;
  for (size_t i = 0; i < 8; ++i) key = (key << 8) | static_cast<unsigned char>(s.data()[i]);
  return key;
}

// RocksDB writes these in every database directory; an empty directory or one with CURRENT is ours
// to use, anything else is somebody's.
bool holds_database(const fs::path& dir) { return fs::exists(dir / "CURRENT"); }

bool empty_directory(const fs::path& dir) { return fs::is_directory(dir) && fs::directory_iterator(dir) == fs::directory_iterator(); }

}  // namespace

struct DiskTier::Db {
  std::unique_ptr<rocksdb::DB> db;
  rocksdb::WriteOptions write;
  rocksdb::ReadOptions read;
};

// A batch keeps its operations until write(), which hands them to RocksDB in key order: its memory
// table is a skip list that inserts a run of ascending keys far faster than keys at random.
struct DiskTier::Batch::Impl {
  struct Op {
    uint64_t key;
    size_t row;  // offset in `rows`, or kErase
  };
  static constexpr size_t kErase = SIZE_MAX;
  std::vector<Op> ops;
  std::vector<float> rows;
  size_t row_floats = 0;
};

DiskTier::Batch::Batch() : impl_(std::make_unique<Impl>()) {}
DiskTier::Batch::~Batch() = default;
DiskTier::Batch::Batch(Batch&&) noexcept = default;

void DiskTier::Batch::put(uint64_t key, const float* row, size_t row_floats) {
  impl_->ops.push_back({key, impl_->rows.size()});
  impl_->rows.insert(impl_->rows.end(), row, row + row_floats);
  impl_->row_floats = row_floats;
}

void DiskTier::Batch::erase(uint64_t key) { impl_->ops.push_back({key, Impl::kErase}); }

size_t DiskTier::Batch::size() const { return impl_->ops.size(); }

void DiskTier::Batch::clear() {
  impl_->ops.clear();
  impl_->rows.clear();
}

DiskTier::DiskTier(std::string table, std::string dir, size_t row_floats)
    : table_(std::move(table)), dir_(std::move(dir)), row_floats_(row_floats), db_(std::make_unique<Db>()) {
  std::error_code ec;
  const fs::path path(dir_);
  fs::create_directories(path, ec);
  if (ec) fail("cannot be created", ec.message());
  if (!holds_database(path) && !empty_directory(path))
    fail("holds files that are not a RocksDB database", "it is left alone; empty it or choose another ps.ssd_dir");
  rocksdb::Options options;
  options.create_if_missing = true;
  options.avoid_flush_during_shutdown = true;  // the rows die with the process (see the header)
  options.compression = rocksdb::kNoCompression;  // rows of random floats do not compress
  // Evicted rows arrive at random keys, and compaction is most of a tier's work (a server's second
  // core, measured): bigger memory tables and more sorted runs before a merge make each row's
  // rewrites fewer. Universal compaction rewrites a row about log(size) times where leveled
  // compaction rewrites it about ten times a level. Space: up to five times the rows for a while
  // (the newer runs may reach four times the oldest before all merge).
  options.write_buffer_size = 32 << 20;
  options.compaction_style = rocksdb::kCompactionStyleUniversal;
  options.compaction_options_universal.max_size_amplification_percent = 400;
  options.level0_file_num_compaction_trigger = 8;
  options.max_background_jobs = 2;
  options.max_open_files = 256;
  // Most keys a batch looks up are new or in memory: a bloom filter over the memory table answers
  // "not here" without a walk of its skip list (the whole cost of a miss otherwise).
  options.memtable_whole_key_filtering = true;
  options.memtable_prefix_bloom_size_ratio = 0.05;
  rocksdb::BlockBasedTableOptions table_options;
  // A new key is looked up before it is created: the filter answers "not here" without a read.
  table_options.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table_options.block_cache = rocksdb::NewLRUCache(32 << 20);
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table_options));
  if (holds_database(path)) {
    // An earlier run's rows: checkpoints, not this directory, hold what outlives a server.
    rocksdb::DB* probe = nullptr;
    rocksdb::Status opened = rocksdb::DB::Open(options, dir_, &probe);
    if (!opened.ok() && opened.IsIOError() && opened.ToString().find("lock") != std::string::npos)
      fail("is in use by another process", opened.ToString() + "; give each job its own ps.ssd_dir");
    if (!opened.ok()) fail("is a corrupt or unreadable RocksDB database", opened.ToString() + "; remove it to start afresh");
    delete probe;
    rocksdb::Status destroyed = rocksdb::DestroyDB(dir_, options);
    if (!destroyed.ok()) fail("could not be emptied", destroyed.ToString());
  }
  rocksdb::DB* db = nullptr;
  rocksdb::Status status = rocksdb::DB::Open(options, dir_, &db);
  if (!status.ok()) fail("cannot be opened", status.ToString());
  db_->db.reset(db);
  db_->write.disableWAL = true;
  db_->read.fill_cache = true;
}

DiskTier::~DiskTier() {
  if (db_ && db_->db) db_->db->Close().PermitUncheckedError();
}

void DiskTier::fail(const std::string& what, const std::string& status) const {
  if (status.find("No space left") != std::string::npos || status.find("ENOSPC") != std::string::npos)
    throw DiskTierError(fmt::format("sparse table {}: the disk tier {} is full ({})", table_, dir_, status));
  throw DiskTierError(fmt::format("sparse table {}: the disk tier {} {}: {}", table_, dir_, what, status));
}

void DiskTier::read(std::span<const uint64_t> keys, float* rows, std::vector<char>& found) {
  found.assign(keys.size(), 0);
  if (keys.empty()) return;
  std::vector<char> encoded(keys.size() * 8);
  std::vector<rocksdb::Slice> slices(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    encode(keys[i], encoded.data() + i * 8);
    slices[i] = rocksdb::Slice(encoded.data() + i * 8, 8);
  }
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);  // per thread; its counters cost a TLS lookup each
  std::vector<rocksdb::PinnableSlice> values(keys.size());
  std::vector<rocksdb::Status> statuses(keys.size());
  db_->db->MultiGet(db_->read, db_->db->DefaultColumnFamily(), keys.size(), slices.data(), values.data(),
                    statuses.data());
  const size_t bytes = row_floats_ * sizeof(float);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (statuses[i].IsNotFound()) continue;
    if (!statuses[i].ok()) fail("cannot be read", statuses[i].ToString());
    if (values[i].size() != bytes)
      fail("is corrupt", fmt::format("key {} holds {} bytes where a row has {}", keys[i], values[i].size(), bytes));
    std::memcpy(rows + i * row_floats_, values[i].data(), bytes);
    found[i] = 1;
  }
}

void DiskTier::write(Batch& batch) {
  if (batch.size() == 0) return;
  // RocksDB's own way out of a full disk is not always an error status: Debian's build can abort
  // on an assertion when a flush fails for want of space. So this tier stops first, while RocksDB
  // still has room to flush its memory tables.
  struct statvfs disk {};
  if (::statvfs(dir_.c_str(), &disk) == 0) {
    const uint64_t free_bytes = static_cast<uint64_t>(disk.f_bavail) * disk.f_frsize;
    if (free_bytes < kReserveBytes)
      throw DiskTierError(fmt::format("sparse table {}: the disk tier {} is full ({} MB free, below the {} MB kept "
                                      "for RocksDB's flushes and compactions)",
                                      table_, dir_, free_bytes >> 20, kReserveBytes >> 20));
  }
  Batch::Impl& b = *batch.impl_;
  // Stable: a key erased and then put again in one batch keeps that order.
  std::stable_sort(b.ops.begin(), b.ops.end(), [](const auto& x, const auto& y) { return x.key < y.key; });
  rocksdb::WriteBatch ordered;
  char k[8];
  for (const auto& op : b.ops) {
    encode(op.key, k);
    if (op.row == Batch::Impl::kErase) {
      ordered.Delete(rocksdb::Slice(k, 8));
    } else {
      ordered.Put(rocksdb::Slice(k, 8),
                  rocksdb::Slice(reinterpret_cast<const char*>(b.rows.data() + op.row), b.row_floats * sizeof(float)));
    }
  }
  rocksdb::Status status = db_->db->Write(db_->write, &ordered);
  if (!status.ok()) fail("cannot be written", status.ToString());
  batch.clear();
}

void DiskTier::scan(const std::function<void(uint64_t key, const float* row)>& visit) {
  rocksdb::ReadOptions options;
  options.fill_cache = false;  // a whole-table walk would only push the hot blocks out
  std::unique_ptr<rocksdb::Iterator> it(db_->db->NewIterator(options));
  const size_t bytes = row_floats_ * sizeof(float);
  std::vector<float> row(row_floats_);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (it->key().size() != 8 || it->value().size() != bytes)
      fail("is corrupt", fmt::format("a row of {} bytes under a key of {} where rows have {} under 8", it->value().size(),
                                     it->key().size(), bytes));
    std::memcpy(row.data(), it->value().data(), bytes);
    visit(decode(it->key()), row.data());
  }
  if (!it->status().ok()) fail("cannot be read", it->status().ToString());
}

void DiskTier::clear() {
  char first[8], last[9];
  encode(0, first);
  std::memset(last, 0xff, sizeof last);  // after every 8-byte key
  rocksdb::Status status = db_->db->DeleteRange(db_->write, db_->db->DefaultColumnFamily(), rocksdb::Slice(first, 8),
                                                rocksdb::Slice(last, 9));
  if (!status.ok()) fail("cannot be emptied", status.ToString());
  rocksdb::CompactRangeOptions compact;
  status = db_->db->CompactRange(compact, nullptr, nullptr);
  if (!status.ok()) fail("cannot be compacted", status.ToString());
}

uint64_t DiskTier::disk_bytes() {
  uint64_t bytes = 0;
  db_->db->GetIntProperty(rocksdb::DB::Properties::kTotalSstFilesSize, &bytes);
  return bytes;
}

uint64_t DiskTier::memory_bytes() {
  uint64_t tables = 0, readers = 0;
  db_->db->GetIntProperty(rocksdb::DB::Properties::kCurSizeAllMemTables, &tables);
  db_->db->GetIntProperty(rocksdb::DB::Properties::kEstimateTableReadersMem, &readers);
  return tables + readers;
}

}  // namespace paddle::ps
