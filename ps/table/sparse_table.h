#pragma once
// SparseTable: uint64 key -> row, one sparse table of a parameter server (or of a single
// process). Its SparseTableSpec (ps/table/sparse_table_spec.h) says what a row holds:
//
//   plain  dim values under the TableSpecs-wide UpdateRule (ps/table/update_rule.h), pushed as dim
//          gradients per key;
//   CTR    embed_w and embedx with show/click statistics (ps/table/ctr_accessor.h), pushed as
//          show, click and dim gradients per key.
//
// A pull is always dim floats per key. A row is created on a key's admitted push (AdmissionSpec)
// with a uniform init seeded by (seed, key), so every server and a local process create the same
// row; pulling a key without a row gives the values it would be created with, without creating
// it (so evaluation does not grow the table, and GEO's local copies start where the servers'
// rows do). Pushes either apply at once (push) or accumulate until apply_pending(n) (the
// synchronous mode: the gradients summed, divided by n; a CTR push's show and click summed).
//
// Rows live in shards by the high half of the key's RowStore::hash (so every shard fills, whatever
// residue the server's keys share), each shard with its own lock and its own RowStore
// (ps/table/row_store.h). A stored row is the accessor's floats, then one flags word:
//
//   plain  values[dim], rule state[dim * rule.state_width()], (adam only) i64 updates, flags
//   CTR    the CtrAccessor layout, flags
//
// flags: bit 0, touched since the row was last saved; bit 1, touched since the last shrink.
// A batch is taken shard by shard, each shard's lock held once, its keys in their order in the
// batch (so a key twice in a batch is updated twice, in order). With a HelperPool
// (ps/table/helper_pool.h) the shards of a big batch are taken on several threads at once, each shard
// whole by one of them, so the rows come out the same.
//
// A table with StorageSpec::kSsd keeps at most memory_rows rows in memory, an even share per shard,
// and the rest in its DiskTier (ps/table/disk_tier.h); a row is in one tier at a time. A batch takes
// a shard's keys found in memory at once; those missing wait, are read from disk in one MultiGet,
// moved into memory (a pull too: a row read is a row about to be pushed) and then taken in their
// order, so a key's updates keep their order and the rows come out as a memory table's (the
// waiting keys include every new key, in order, so even admission's random draws are the same).
// After the batch, a shard
// over its share evicts down to nine tenths of it, in one write. The eviction policy: rows unseen
// for the most shrinks first (CTR rows' unseen_days), then the least recently used (each memory
// row carries the shard's batch count of its last use, one word after the flags, never saved), so
// a batch's own rows go last. Shrink, saves and loads cover both tiers, holding every shard's lock
// as they do for memory (so a save is one instant of both tiers). The admission counters and the
// synchronous mode's pending gradients stay in memory.
//
// Checkpoint bytes (ps/table/checkpoint.h, format 3): u64 rows, u64 floats per row, then per row
// u64 key and the stored row's floats, flags included. Every call taking spans also takes vectors.

#include <chrono>
#include <cstdint>
#include <istream>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <span>
#include <vector>

#include "ps/table/ctr_accessor.h"
#include "ps/table/disk_tier.h"
#include "ps/table/helper_pool.h"
#include "ps/table/row_store.h"
#include "ps/table/save_mode.h"
#include "ps/table/sparse_table_spec.h"
#include "ps/table/table_reports.h"
#include "ps/table/update_rule.h"

namespace paddle::ps {

class SparseTable {
 public:
  // `plain_rule` updates a plain table's rows (a CTR table's rules are in its spec); plain rows
  // start uniform in [-init_range, init_range]. Throws std::invalid_argument for a CTR table of dim 0
  // or a tiered one with fewer memory_rows than shards, and common::DataError for a disk tier
  // directory it cannot use (ps/table/disk_tier.h).
  SparseTable(SparseTableSpec spec, UpdateRule plain_rule, float init_range = 0.01f, size_t shards = 16);
  // A plain table that admits every key.
  SparseTable(size_t dim, UpdateRule rule, uint64_t seed, float init_range = 0.01f, size_t shards = 16);

  // The bytes a row takes in memory (its key, stored floats and index slot), for sizing
  // StorageSpec::memory_rows from a budget.
  static size_t memory_row_bytes(const SparseTableSpec& spec, const UpdateRule& plain_rule);

  const SparseTableSpec& spec() const { return spec_; }
  bool tiered() const { return disk_ != nullptr; }
  size_t dim() const { return spec_.dim; }
  size_t push_width() const { return push_width_; }
  size_t rows();
  // Threads to spread big batches over (a server's); null: the calling thread alone. Set it
  // before the table is shared between threads; the pool must outlive the table's calls.
  void set_helpers(HelperPool* helpers) { helpers_ = helpers; }
  std::vector<float> pull(std::span<const uint64_t> keys);  // keys.size() * dim values
  void pull(std::span<const uint64_t> keys, float* out);
  // keys.size() * push_width() floats each; throw std::invalid_argument on another length.
  void push(std::span<const uint64_t> keys, std::span<const float> grads);
  void accumulate(std::span<const uint64_t> keys, std::span<const float> grads);
  void apply_pending(int divisor);
  // Tiered tables: moves the rows of `keys` that are on disk into memory now, as a pull would,
  // so that the pull of the next batch finds them there; values do not change, and the lookups do
  // not count in the hit rate (the reads do in the disk reads). Where a shard's share holds four
  // times the prefetch's keys in it, the shard evicts after it as after a batch (the rows of the
  // batch in progress are then among the newest, which stay); in a smaller share a prefetch only
  // fills the free room, never evicting, and keys past the room are read by their pull. Memory
  // tables: nothing.
  void prefetch(std::span<const uint64_t> keys);
  void prefetch(const std::vector<uint64_t>& keys) { prefetch(std::span<const uint64_t>(keys)); }
  void add(std::span<const uint64_t> keys, std::span<const float> delta);  // GEO
  std::vector<float> pull(const std::vector<uint64_t>& keys) { return pull(std::span<const uint64_t>(keys)); }
  void push(const std::vector<uint64_t>& keys, const std::vector<float>& grads) {
    push(std::span<const uint64_t>(keys), std::span<const float>(grads));
  }
  void accumulate(const std::vector<uint64_t>& keys, const std::vector<float>& grads) {
    accumulate(std::span<const uint64_t>(keys), std::span<const float>(grads));
  }
  void add(const std::vector<uint64_t>& keys, const std::vector<float>& delta) {
    add(std::span<const uint64_t>(keys), std::span<const float>(delta));
  }

  // CTR tables: decays show and click, ages the rows not pushed since the last shrink, and
  // deletes the expired ones (CtrAccessor::expired), freeing their memory. Plain tables keep
  // every row. Returns the rows before and after (`table` is the spec's name).
  TableShrink shrink();
  TableMemory memory();
  // The stored floats of `key`'s row (the layout above, flags word last), in either tier, or nullopt.
  std::optional<std::vector<float>> stored_row(uint64_t key);

  // The rows `mode` selects (ps/table/save_mode.h), clearing their touched flag and delta_score first;
  // returns how many it wrote.
  uint64_t save(std::ostream& out, SaveMode mode = SaveMode::kAll);
  // Replaces the rows with those of `in` (format 3), or with `upsert` adds them over the rows
  // there. Throws std::runtime_error for rows of another width or truncated data.
  void load(std::istream& in, bool upsert = false);
  // The rows of a format 1 or 2 checkpoint (plain tables: u64 key, i64 updates, f32[] values and state).
  void load_legacy(std::istream& in);

 private:
  // The flags word's bits (the layout above).
  static constexpr uint32_t kTouchedSinceSave = 1, kTouchedSinceShrink = 2;
  // Rows a whole-tier walk (shrink, save, load) writes to disk at once.
  static constexpr size_t kDiskBatchRows = 65536;

  struct Shard {
    Shard(size_t width, size_t push_width) : rows(width), pending(push_width), counts(1) {}
    std::mutex mutex;
    RowStore rows;
    RowStore pending;  // the synchronous mode's summed pushes, push_width floats per key
    RowStore counts;   // AdmissionSpec::kCount: pushes so far of keys without a row
    uint64_t random = 0;  // AdmissionSpec::kProbability's stream
    // Tiered tables: rows in the DiskTier, batches taken (the rows' last-use clock), and counts
    // for TierReport.
    uint64_t disk_rows = 0;
    uint32_t clock = 0;
    uint64_t lookups = 0, hits = 0, disk_reads = 0, evictions = 0;
  };
  // Tiered tables, the shard's lock held: moves the rows of `keys` (their hashes alongside) that
  // are on disk into memory, stamps every row of `keys` as used now, and queues the disk deletes
  // in `batch`.
  void bring_in(Shard& shard, std::span<const uint64_t> keys, std::span<const uint64_t> hashes, DiskTier::Batch& batch);
  // Tiered, the lock held: reads `missing` (keys not in memory) from disk in one MultiGet and moves
  // the rows found into memory, stamped `now`, their disk deletes queued in `batch`. Returns how
  // many of `missing` were on disk (the rest are new keys).
  size_t read_in(Shard& shard, std::span<const uint64_t> missing, std::span<const uint64_t> missing_hashes, uint32_t now,
               DiskTier::Batch& batch);
  // Tiered tables, the lock held: evicts down to nine tenths of the shard's share when over it,
  // then writes `batch` (with the evictions) to disk.
  void settle(Shard& shard, DiskTier::Batch& batch);
  void stamp(float* row, uint32_t clock) const;
  size_t saved_width() const { return flags_at_ + 1; }
  size_t shard_for_key(uint64_t key) const { return shard_of(RowStore::hash(key)); }
  bool ctr() const { return ctr_.has_value(); }
  // The row of `key`, created if its push is admitted; nullptr when not. Caller holds the lock.
  // `hash` is RowStore::hash(key).
  float* admitted_row(Shard& shard, uint64_t key, uint64_t hash);
  float* created_row(Shard& shard, uint64_t key, uint64_t hash);  // the row, created when missing
  size_t shard_of(uint64_t hash) const;
  void initial_values(uint64_t key, float* out) const;  // dim floats
  void apply(float* row, const float* pushed);
  void add_to(float* row, const float* delta);
  uint32_t flags(const float* row) const;
  void set_flags(float* row, uint32_t flags) const;
  void check_sizes(std::span<const uint64_t> keys, size_t values, size_t width, const char* call) const;
  // Calls each(shard, i, hash of keys[i], row) for every position i of `keys`, as the class
  // comment says; row is keys[i]'s memory row where by_shard has looked it up (tiered tables), else
  // nullptr for `each` to look up or create. `inputs`, when
  // given, are the batch's pushed rows or the rows a pull fills (input_width floats per key),
  // prefetched with the table's rows.
  // `counted`: a batch's visit, whose lookups count in the hit rate; else a prefetch's (above).
  template <typename Each>
  void by_shard(std::span<const uint64_t> keys, Each each, const float* inputs = nullptr, size_t input_width = 0,
                bool counted = true);
  bool selected(const float* row, SaveMode mode) const;
  // Clears the touched flag and delta_score a save clears; whether the row changed.
  bool mark_saved(float* row) const;
  // Every shard's lock held: forgets every row of both tiers.
  void forget_rows();
  // The lock held: `key`'s memory row for a checkpoint's row to overwrite, made if missing (a copy
  // of it on disk deleted through `batch`).
  float* loaded_row(Shard& shard, uint64_t key, DiskTier::Batch& batch);

  SparseTableSpec spec_;
  UpdateRule rule_;
  std::optional<CtrAccessor> ctr_;
  float init_range_;
  size_t push_width_;
  size_t flags_at_;      // the flags word's offset in a row
  size_t plain_steps_at_;  // adam's update count (2 floats) in a plain row, or flags_at_ when none
  std::vector<std::unique_ptr<Shard>> shards_;
  HelperPool* helpers_ = nullptr;
  std::unique_ptr<DiskTier> disk_;
  size_t shard_memory_rows_ = 0;  // tiered
  // The previous TierReport's counts and time, for its rates.
  std::mutex report_mutex_;
  uint64_t reported_lookups_ = 0, reported_hits_ = 0, reported_reads_ = 0, reported_evictions_ = 0;
  std::chrono::steady_clock::time_point reported_at_ = std::chrono::steady_clock::now();
};

}  // namespace paddle::ps
