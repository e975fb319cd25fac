// SparseTable's upkeep (sparse_table.h): shrink, which walks every row of both tiers, and the
// memory report.
#include "ps/table/sparse_table.h"

#include <algorithm>
#include <cstring>

namespace paddle::ps {

TableShrink SparseTable::shrink() {
  TableShrink report{spec_.name, 0, 0};
  std::vector<std::unique_lock<std::mutex>> all;  // a tiered table: both tiers at one instant
  if (disk_)
    for (auto& s : shards_) all.emplace_back(s->mutex);
  for (auto& shard : shards_) {
    Shard& s = *shard;
    std::unique_lock<std::mutex> lock;
    if (!disk_) lock = std::unique_lock(s.mutex);
    report.rows_before += s.rows.size() + s.disk_rows;
    if (ctr()) {
      for (size_t r = 0; r < s.rows.size();) {
        float* row = s.rows.at(r);
        const uint32_t f = flags(row);
        ctr_->decay(row, (f & kTouchedSinceShrink) == 0);
        set_flags(row, f & ~kTouchedSinceShrink);
        if (ctr_->expired(row)) s.rows.erase(r);  // the last row takes number r: look at r again
        else ++r;
      }
    }
    report.rows_after += s.rows.size() + s.disk_rows;
  }
  if (disk_ && ctr()) {
    DiskTier::Batch batch;
    std::vector<float> row(saved_width());
    uint64_t deleted = 0;
    disk_->scan([&](uint64_t key, const float* stored) {
      std::copy_n(stored, row.size(), row.data());
      const uint32_t f = flags(row.data());
      ctr_->decay(row.data(), (f & kTouchedSinceShrink) == 0);
      set_flags(row.data(), f & ~kTouchedSinceShrink);
      if (ctr_->expired(row.data())) {
        batch.erase(key);
        --shards_[shard_for_key(key)]->disk_rows;
        ++deleted;
      } else {
        batch.put(key, row.data(), row.size());
      }
      if (batch.size() >= kDiskBatchRows) disk_->write(batch);
    });
    disk_->write(batch);
    report.rows_after -= deleted;
  }
  return report;
}

TableMemory SparseTable::memory() {
  TableMemory m{spec_.name, 0, 0, 0, {}};
  uint64_t lookups = 0, hits = 0, reads = 0, evictions = 0;
  for (auto& shard : shards_) {
    Shard& s = *shard;
    std::lock_guard lock(s.mutex);
    m.rows += s.rows.size() + s.disk_rows;
    m.value_bytes += s.rows.arena_bytes() + s.pending.arena_bytes();
    m.index_bytes += s.rows.index_bytes() + s.pending.index_bytes() + s.counts.arena_bytes() + s.counts.index_bytes();
    m.tier.memory_rows += s.rows.size();
    m.tier.disk_rows += s.disk_rows;
    lookups += s.lookups;
    hits += s.hits;
    reads += s.disk_reads;
    evictions += s.evictions;
  }
  if (!disk_) return m;
  m.tier.tiered = true;
  m.tier.disk_bytes = disk_->disk_bytes();
  m.tier.database_bytes = disk_->memory_bytes();
  std::lock_guard lock(report_mutex_);
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::max(1e-9, std::chrono::duration<double>(now - reported_at_).count());
  const uint64_t looked = lookups - reported_lookups_;
  m.tier.hit_rate = looked == 0 ? 0.0 : static_cast<double>(hits - reported_hits_) / static_cast<double>(looked);
  m.tier.disk_reads_per_s = static_cast<double>(reads - reported_reads_) / seconds;
  m.tier.evictions_per_s = static_cast<double>(evictions - reported_evictions_) / seconds;
  reported_lookups_ = lookups;
  reported_hits_ = hits;
  reported_reads_ = reads;
  reported_evictions_ = evictions;
  reported_at_ = now;
  return m;
}

}  // namespace paddle::ps
