// SparseTable's saves and loads (sparse_table.h): the rows a SaveMode selects, streamed to and
// from a checkpoint across both tiers.
#include "ps/table/sparse_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "common/error.h"
#include "ps/table/table_io.h"

namespace paddle::ps {

std::optional<std::vector<float>> SparseTable::stored_row(uint64_t key) {
  Shard& s = *shards_[shard_for_key(key)];
  std::lock_guard lock(s.mutex);
  if (const float* row = s.rows.find(key)) return std::vector<float>(row, row + saved_width());
  if (!disk_ || s.disk_rows == 0) return std::nullopt;
  std::vector<float> row(saved_width());
  std::vector<char> found;
  disk_->read(std::span<const uint64_t>(&key, 1), row.data(), found);
  if (!found[0]) return std::nullopt;
  return row;
}

bool SparseTable::selected(const float* row, SaveMode mode) const {
  const bool touched = (flags(row) & kTouchedSinceSave) != 0;
  switch (mode) {
    case SaveMode::kAll: return true;
    case SaveMode::kBase: return !ctr() || ctr_->score(row) >= spec_.ctr.base_threshold;
    case SaveMode::kDelta:
      return touched && (!ctr() || row[CtrAccessor::kDeltaScore] >= spec_.ctr.delta_threshold);
  }
  return false;
}

bool SparseTable::mark_saved(float* row) const {
  const bool changed = (flags(row) & kTouchedSinceSave) != 0 || (ctr() && row[CtrAccessor::kDeltaScore] != 0);
  set_flags(row, flags(row) & ~kTouchedSinceSave);
  if (ctr()) row[CtrAccessor::kDeltaScore] = 0;
  return changed;
}

uint64_t SparseTable::save(std::ostream& out, SaveMode mode) {
  std::vector<std::unique_lock<std::mutex>> locks;  // one consistent cut of every shard (and of the disk tier)
  for (auto& s : shards_) locks.emplace_back(s->mutex);
  uint64_t count = 0;
  for (auto& s : shards_)
    for (size_t r = 0; r < s->rows.size(); ++r) count += selected(s->rows.at(r), mode);
  if (disk_) {
    if (mode == SaveMode::kAll) {
      for (auto& s : shards_) count += s->disk_rows;
    } else {
      disk_->scan([&](uint64_t, const float* row) { count += selected(row, mode); });
    }
  }
  const size_t width = saved_width();
  table_io::write<uint64_t>(out, count);
  table_io::write<uint64_t>(out, width);
  uint64_t written = 0;
  for (auto& s : shards_)
    for (size_t r = 0; r < s->rows.size(); ++r) {
      float* row = s->rows.at(r);
      if (!selected(row, mode)) continue;
      mark_saved(row);
      table_io::write<uint64_t>(out, s->rows.key_at(r));
      table_io::write_floats(out, row, width);
      ++written;
    }
  if (disk_) {
    DiskTier::Batch batch;
    std::vector<float> row(width);
    disk_->scan([&](uint64_t key, const float* stored) {
      std::copy_n(stored, width, row.data());
      if (!selected(row.data(), mode)) return;
      if (mark_saved(row.data())) batch.put(key, row.data(), width);
      table_io::write<uint64_t>(out, key);
      table_io::write_floats(out, row.data(), width);
      ++written;
      if (batch.size() >= kDiskBatchRows) disk_->write(batch);
    });
    disk_->write(batch);
  }
  if (written != count)
    throw std::logic_error(fmt::format("sparse table {}: counted {} rows to save but wrote {}", spec_.name, count, written));
  return count;
}

void SparseTable::forget_rows() {
  for (auto& s : shards_) {
    s->rows.clear();
    s->pending.clear();
    s->counts.clear();
    s->disk_rows = 0;
  }
  if (disk_) disk_->clear();
}

float* SparseTable::loaded_row(Shard& shard, uint64_t key, DiskTier::Batch& batch) {
  bool added = false;
  float* row = shard.rows.insert(key, added);
  if (disk_) {
    if (added && shard.disk_rows > 0) {  // an upsert over a row on disk: the loaded one replaces it
      std::vector<float> old(saved_width());
      std::vector<char> found;
      disk_->read(std::span<const uint64_t>(&key, 1), old.data(), found);
      if (found[0]) {
        batch.erase(key);
        --shard.disk_rows;
      }
    }
    stamp(row, shard.clock);
  }
  shard.counts.erase_key(key);
  return row;
}

void SparseTable::load(std::istream& in, bool upsert) {
  const auto count = table_io::read<uint64_t>(in);
  const auto width = table_io::read<uint64_t>(in);
  if (width != saved_width())
    throw common::DataError(fmt::format("sparse table {} holds rows of {} floats where this model's have {} (another "
                                         "accessor, dim or rule?)", spec_.name, width, saved_width()));
  std::vector<std::unique_lock<std::mutex>> locks;
  for (auto& s : shards_) locks.emplace_back(s->mutex);
  if (!upsert) forget_rows();
  DiskTier::Batch batch;
  std::vector<float> values(width);
  for (uint64_t i = 0; i < count; ++i) {
    const auto key = table_io::read<uint64_t>(in);
    table_io::read_floats(in, values.data(), width);
    Shard& s = *shards_[shard_for_key(key)];
    if (disk_ && !upsert && s.rows.size() >= shard_memory_rows_) {
      // A whole table's rows, each once and none used yet: once the shard's memory is full the
      // rest go straight to disk, with no eviction to choose.
      batch.put(key, values.data(), width);
      ++s.disk_rows;
      if (batch.size() >= kDiskBatchRows) disk_->write(batch);
      continue;
    }
    std::copy(values.begin(), values.end(), loaded_row(s, key, batch));
    if (disk_ && s.rows.size() > shard_memory_rows_) settle(s, batch);
  }
  if (disk_) disk_->write(batch);
}

void SparseTable::load_legacy(std::istream& in) {
  if (ctr()) throw common::DataError(fmt::format("sparse table {}: a format 1 or 2 checkpoint holds no CTR rows", spec_.name));
  const auto count = table_io::read<uint64_t>(in);
  std::vector<std::unique_lock<std::mutex>> locks;
  for (auto& s : shards_) locks.emplace_back(s->mutex);
  forget_rows();
  DiskTier::Batch batch;
  for (uint64_t i = 0; i < count; ++i) {
    const auto key = table_io::read<uint64_t>(in);
    const auto steps = table_io::read<int64_t>(in);
    const std::vector<float> values = table_io::read_counted(in, plain_steps_at_);
    Shard& s = *shards_[shard_for_key(key)];
    float* row = loaded_row(s, key, batch);
    std::copy(values.begin(), values.end(), row);
    if (plain_steps_at_ != flags_at_) std::memcpy(row + plain_steps_at_, &steps, sizeof steps);
    set_flags(row, 0);
    if (disk_ && s.rows.size() > shard_memory_rows_) settle(s, batch);
  }
  if (disk_) disk_->write(batch);
}

}  // namespace paddle::ps
