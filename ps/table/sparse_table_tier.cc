// SparseTable, the disk tier's side (sparse_table.h): bringing a batch's rows on disk into
// memory, and evicting a shard over its share.
#include "ps/table/sparse_table.h"

#include <algorithm>
#include <cstring>
#include <functional>

namespace paddle::ps {

void SparseTable::bring_in(Shard& shard, std::span<const uint64_t> keys, std::span<const uint64_t> hashes,
                           DiskTier::Batch& batch) {
  const uint32_t now = ++shard.clock;
  std::vector<uint64_t> missing, missing_hashes;
  constexpr size_t kSlotAhead = 16, kRowAhead = 8;  // as by_shard's loop: every slot and row is a cache miss
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i + kSlotAhead < keys.size()) __builtin_prefetch(shard.rows.probe_address(hashes[i + kSlotAhead]));
    if (i + kRowAhead < keys.size())
      if (const char* row = static_cast<const char*>(shard.rows.likely_row(hashes[i + kRowAhead]))) {
        __builtin_prefetch(row);
        __builtin_prefetch(row + 64);
      }
    ++shard.lookups;
    if (float* row = shard.rows.find(keys[i], hashes[i])) {
      ++shard.hits;
      stamp(row, now);
    } else if (shard.disk_rows > 0) {
      missing.push_back(keys[i]);
      missing_hashes.push_back(hashes[i]);
    } else {
      --shard.lookups;  // a new key
    }
  }
  shard.lookups -= missing.size() - read_in(shard, missing, missing_hashes, now, batch);
}

size_t SparseTable::read_in(Shard& shard, std::span<const uint64_t> missing, std::span<const uint64_t> missing_hashes,
                            uint32_t now, DiskTier::Batch& batch) {
  if (missing.empty()) return 0;
  size_t on_disk = 0;
  const size_t width = saved_width();
  std::vector<float> rows(missing.size() * width);
  std::vector<char> found;
  disk_->read(missing, rows.data(), found);
  for (size_t i = 0; i < missing.size(); ++i) {
    if (!found[i]) continue;
    ++on_disk;
    bool added = false;
    float* row = shard.rows.insert(missing[i], missing_hashes[i], added);
    if (!added) continue;  // the key twice in the batch
    std::copy_n(rows.data() + i * width, width, row);
    stamp(row, now);
    batch.erase(missing[i]);
    --shard.disk_rows;
    ++shard.disk_reads;
  }
  return on_disk;
}

void SparseTable::settle(Shard& shard, DiskTier::Batch& batch) {
  RowStore& rows = shard.rows;
  if (rows.size() <= shard_memory_rows_) {
    disk_->write(batch);
    return;
  }
  // Down to nine tenths at once, so a full shard pays for the choice once per tenth of its rows.
  const size_t keep = std::max<size_t>(1, shard_memory_rows_ * 9 / 10);
  const size_t count = rows.size() - keep;
  std::vector<std::pair<uint64_t, uint32_t>> rank(rows.size());  // {lower leaves first, row}
  for (size_t r = 0; r < rows.size(); ++r) {
    const float* row = rows.at(r);
    uint32_t last_use;
    std::memcpy(&last_use, row + flags_at_ + 1, sizeof last_use);
    const uint64_t unseen =
        ctr() ? static_cast<uint64_t>(std::clamp(row[CtrAccessor::kUnseenDays], 0.0f, 65535.0f)) : uint64_t{0};
    rank[r] = {((65535 - unseen) << 32) | last_use, static_cast<uint32_t>(r)};
  }
  std::nth_element(rank.begin(), rank.begin() + static_cast<std::ptrdiff_t>(count), rank.end());
  std::vector<uint32_t> victims(count);
  for (size_t v = 0; v < count; ++v) victims[v] = rank[v].second;
  // Highest row first: erase() moves the last row into the erased one's place, and every row
  // after a victim is then a row that stays.
  std::sort(victims.begin(), victims.end(), std::greater<>());
  for (uint32_t r : victims) batch.put(rows.key_at(r), rows.at(r), saved_width());
  disk_->write(batch);  // before the rows leave memory: a failed write loses none
  for (uint32_t r : victims) rows.erase(r);
  shard.disk_rows += count;
  shard.evictions += count;
}

}  // namespace paddle::ps
