#include "ps/table/sparse_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "ps/table/table_io.h"

namespace paddle::ps {
namespace {

constexpr uint32_t kTouchedSinceSave = 1, kTouchedSinceShrink = 2;
// Rows a whole-tier walk (shrink, save, load) writes to disk at once.
constexpr size_t kDiskBatchRows = 65536;

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

double unit_interval(uint64_t random) { return static_cast<double>(random >> 11) * (1.0 / 9007199254740992.0); }

// The floats of a stored row before its flags word (the layouts of sparse_table.h).
size_t values_width(const SparseTableSpec& spec, const UpdateRule& plain_rule) {
  if (spec.accessor == SparseTableSpec::Accessor::kCtr) return CtrAccessor(spec.ctr, spec.dim).width();
  return spec.dim * (1 + plain_rule.state_width()) + (plain_rule.kind == UpdateRule::Kind::kAdam ? 2 : 0);
}

bool on_disk(const SparseTableSpec& spec) { return spec.storage.kind == StorageSpec::Kind::kSsd; }

// Words a memory row holds after the flags word: a tiered table's last-use clock.
size_t clock_words(const SparseTableSpec& spec) { return on_disk(spec) ? 1 : 0; }

}  // namespace

size_t SparseTable::memory_row_bytes(const SparseTableSpec& spec, const UpdateRule& plain_rule) {
  // The key (2 words), the floats, the flags word and the clock, and about 1.5 index slots of 8
  // bytes (the index doubles before it is 3/4 full).
  return (2 + values_width(spec, plain_rule) + 1 + clock_words(spec)) * sizeof(float) + 12;
}

SparseTable::SparseTable(SparseTableSpec spec, UpdateRule plain_rule, float init_range, size_t shards)
    : spec_(std::move(spec)), rule_(plain_rule), init_range_(init_range), push_width_(ps::push_width(spec_)) {
  if (spec_.accessor == SparseTableSpec::Accessor::kCtr) {
    ctr_.emplace(spec_.ctr, spec_.dim);
    plain_steps_at_ = ctr_->width();
  } else {
    plain_steps_at_ = spec_.dim * (1 + rule_.state_width());
  }
  flags_at_ = values_width(spec_, rule_);
  for (size_t s = 0; s < shards; ++s) {
    shards_.push_back(std::make_unique<Shard>(flags_at_ + 1 + clock_words(spec_), push_width_));
    shards_.back()->random = splitmix64(spec_.seed ^ splitmix64(s + 0x5eed));
  }
  if (on_disk(spec_)) {
    if (spec_.storage.memory_rows < shards)
      throw std::invalid_argument(fmt::format("sparse table {}: a memory tier of {} rows is fewer than one per shard ({})",
                                              spec_.name, spec_.storage.memory_rows, shards));
    shard_memory_rows_ = spec_.storage.memory_rows / shards;
    disk_ = std::make_unique<DiskTier>(spec_.name, spec_.storage.dir, saved_width());
  }
}

SparseTable::SparseTable(size_t dim, UpdateRule rule, uint64_t seed, float init_range, size_t shards)
    : SparseTable(SparseTableSpec{.name = "", .dim = dim, .seed = seed}, rule, init_range, shards) {}

uint32_t SparseTable::flags(const float* row) const {
  uint32_t f;
  std::memcpy(&f, row + flags_at_, sizeof f);
  return f;
}

void SparseTable::set_flags(float* row, uint32_t f) const { std::memcpy(row + flags_at_, &f, sizeof f); }

void SparseTable::stamp(float* row, uint32_t clock) const { std::memcpy(row + flags_at_ + 1, &clock, sizeof clock); }

void SparseTable::initial_values(uint64_t key, float* out) const {
  uint64_t state = splitmix64(spec_.seed ^ splitmix64(key));
  for (size_t i = 0; i < spec_.dim; ++i) {
    state = splitmix64(state);
    const float range = !ctr() ? init_range_ : i == 0 ? spec_.ctr.embed_rule.initial_range : spec_.ctr.embedx_rule.initial_range;
    out[i] = static_cast<float>((2.0 * unit_interval(state) - 1.0) * range);
  }
}

float* SparseTable::created_row(Shard& shard, uint64_t key, uint64_t hash) {
  bool added = false;
  float* row = shard.rows.insert(key, hash, added);
  if (!added) return row;
  if (disk_) stamp(row, shard.clock);
  if (ctr()) {
    float initial[64];
    std::vector<float> big;
    float* values = initial;
    if (spec_.dim > 64) values = (big.resize(spec_.dim), big.data());
    initial_values(key, values);
    ctr_->init(row, values);
  } else {
    initial_values(key, row);
  }
  return row;
}

float* SparseTable::admitted_row(Shard& shard, uint64_t key, uint64_t hash) {
  const AdmissionSpec& admission = spec_.admission;
  if (admission.kind == AdmissionSpec::Kind::kAlways) return created_row(shard, key, hash);
  if (float* row = shard.rows.find(key, hash)) return row;
  if (admission.kind == AdmissionSpec::Kind::kCount) {
    if (admission.count > 1) {
      bool added = false;
      float* count = shard.counts.insert(key, hash, added);
      if (++count[0] < static_cast<float>(admission.count)) return nullptr;
      shard.counts.erase_key(key);
    }
  } else {
    shard.random = splitmix64(shard.random);
    if (unit_interval(shard.random) >= admission.probability) return nullptr;
  }
  return created_row(shard, key, hash);
}

void SparseTable::apply(float* row, const float* pushed) {
  if (ctr()) {
    ctr_->push(row, pushed);
  } else {
    int64_t steps = 0;
    if (plain_steps_at_ != flags_at_) std::memcpy(&steps, row + plain_steps_at_, sizeof steps);
    ++steps;
    rule_.apply(row, row + spec_.dim, pushed, spec_.dim, steps);
    if (plain_steps_at_ != flags_at_) std::memcpy(row + plain_steps_at_, &steps, sizeof steps);
  }
  set_flags(row, flags(row) | kTouchedSinceSave | kTouchedSinceShrink);
}

void SparseTable::add_to(float* row, const float* delta) {
  if (ctr()) ctr_->add(row, delta);
  else for (size_t d = 0; d < spec_.dim; ++d) row[d] += delta[d];
  set_flags(row, flags(row) | kTouchedSinceSave | kTouchedSinceShrink);
}

size_t SparseTable::shard_of(uint64_t hash) const {
  return static_cast<size_t>(((hash >> 32) * shards_.size()) >> 32);  // RowStore's index uses the low 32 bits
}

template <typename Each>
void SparseTable::by_shard(std::span<const uint64_t> keys, Each each, const float* inputs, size_t input_width,
                           bool counted) {
  // Each key's hash once: it picks the shard (no division) and is the index's hash in the shard.
  const size_t count = shards_.size();
  std::vector<uint64_t> hashes(keys.size());
  std::vector<uint32_t> starts(count + 1, 0), order(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    hashes[i] = RowStore::hash(keys[i]);
    ++starts[shard_of(hashes[i]) + 1];
  }
  for (size_t s = 0; s < count; ++s) starts[s + 1] += starts[s];
  std::vector<uint32_t> fill(starts.begin(), starts.end() - 1);
  for (size_t i = 0; i < keys.size(); ++i) order[fill[shard_of(hashes[i])]++] = static_cast<uint32_t>(i);
  // On a big table every index slot and row is a cache miss, and so is a pushed (pulled) row of a
  // big batch taken in shard order: fetch a key's slot 16 keys ahead and, once that is in, its row
  // and its pushed row 8 keys ahead.
  constexpr uint32_t kSlotAhead = 16, kRowAhead = 8;
  auto take_shard = [&](size_t s) {
    if (starts[s] == starts[s + 1]) return;
    Shard& shard = *shards_[s];
    std::lock_guard lock(shard.mutex);
    const uint32_t end = starts[s + 1];
    // Tiered: a key found in memory is taken at once; one missing while the shard has rows on disk
    // waits, and the waiting keys are read from disk in one MultiGet and then taken in their order.
    // Keys only change places with other keys, so every row comes out as a memory table's does.
    const uint32_t now = disk_ ? ++shard.clock : 0;
    const bool may_be_on_disk = disk_ && shard.disk_rows > 0;
    std::vector<uint32_t> waiting;
    for (uint32_t j = starts[s]; j < end; ++j) {
      if (j + kSlotAhead < end) __builtin_prefetch(shard.rows.probe_address(hashes[order[j + kSlotAhead]]));
      if (j + kRowAhead < end)
        if (const char* row = static_cast<const char*>(shard.rows.likely_row(hashes[order[j + kRowAhead]]))) {
          __builtin_prefetch(row);
          __builtin_prefetch(row + 64);
        }
      if (inputs != nullptr && j + kRowAhead < end) {
        const float* input = inputs + order[j + kRowAhead] * input_width;
        __builtin_prefetch(input);
        __builtin_prefetch(input + input_width - 1);
      }
      const uint32_t i = order[j];
      if (!disk_) {
        each(shard, i, hashes[i], nullptr);
        continue;
      }
      shard.lookups += counted;
      if (float* row = shard.rows.find(keys[i], hashes[i])) {
        shard.hits += counted;
        stamp(row, now);
        each(shard, i, hashes[i], row);
      } else if (may_be_on_disk) {
        waiting.push_back(i);
      } else {
        shard.lookups -= counted;  // a new key: no row in either tier to find
        each(shard, i, hashes[i], nullptr);
      }
    }
    if (!disk_) return;
    // A prefetch into a share under four times its keys only fills the free room: eviction there
    // could take the rows of the batch in progress, which are not much newer than the oldest.
    if (!counted && (end - starts[s]) * 4 > shard_memory_rows_) {
      const size_t room = shard.rows.size() < shard_memory_rows_ ? shard_memory_rows_ - shard.rows.size() : 0;
      if (waiting.size() > room) waiting.resize(room);
    }
    DiskTier::Batch batch;
    if (!waiting.empty()) {
      std::vector<uint64_t> missing(waiting.size()), missing_hashes(waiting.size());
      for (size_t w = 0; w < waiting.size(); ++w) {
        missing[w] = keys[waiting[w]];
        missing_hashes[w] = hashes[waiting[w]];
      }
      const size_t on_disk = read_in(shard, missing, missing_hashes, now, batch);
      if (counted) shard.lookups -= waiting.size() - on_disk;  // the new keys among them
      for (uint32_t i : waiting) each(shard, i, hashes[i], shard.rows.find(keys[i], hashes[i]));
    }
    settle(shard, batch);
  };
  // Below this many keys waking a helper costs more than it saves.
  constexpr size_t kHelpedKeys = 4096;
  if (helpers_ != nullptr && keys.size() >= kHelpedKeys) {
    helpers_->run(count, take_shard);
    return;
  }
  for (size_t s = 0; s < count; ++s) take_shard(s);
}

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

void SparseTable::check_sizes(std::span<const uint64_t> keys, size_t values, size_t width, const char* call) const {
  if (keys.size() > UINT32_MAX)
    throw std::invalid_argument(fmt::format("sparse {} of {} keys: at most {} at once", call, keys.size(), UINT32_MAX));
  if (values != keys.size() * width)
    throw std::invalid_argument(fmt::format("sparse {} table {}: {} values for {} keys of {} floats", call, spec_.name,
                                            values, keys.size(), width));
}

size_t SparseTable::rows() {
  size_t n = 0;
  for (auto& s : shards_) {
    std::lock_guard lock(s->mutex);
    n += s->rows.size() + s->disk_rows;
  }
  return n;
}

std::vector<float> SparseTable::pull(std::span<const uint64_t> keys) {
  std::vector<float> out(keys.size() * spec_.dim);
  pull(keys, out.data());
  return out;
}

void SparseTable::pull(std::span<const uint64_t> keys, float* out) {
  check_sizes(keys, keys.size() * spec_.dim, spec_.dim, "pull");
  const size_t dim = spec_.dim;
  by_shard(keys, [&](Shard& s, size_t i, uint64_t hash, const float* row) {
    if (row == nullptr) row = s.rows.find(keys[i], hash);
    if (row == nullptr) initial_values(keys[i], out + i * dim);
    else if (ctr()) ctr_->pull(row, out + i * dim);
    else std::copy_n(row, dim, out + i * dim);
  }, out, dim);
}

void SparseTable::push(std::span<const uint64_t> keys, std::span<const float> grads) {
  check_sizes(keys, grads.size(), push_width_, "push");
  by_shard(keys, [&](Shard& s, size_t i, uint64_t hash, float* row) {
    if (row == nullptr) row = admitted_row(s, keys[i], hash);
    if (row != nullptr) apply(row, grads.data() + i * push_width_);
  }, grads.data(), push_width_);
}

void SparseTable::prefetch(std::span<const uint64_t> keys) {
  if (!disk_) return;
  by_shard(keys, [](Shard&, size_t, uint64_t, const float*) {}, nullptr, 0, false);
}

void SparseTable::accumulate(std::span<const uint64_t> keys, std::span<const float> grads) {
  check_sizes(keys, grads.size(), push_width_, "push");
  const bool always = spec_.admission.kind == AdmissionSpec::Kind::kAlways;
  by_shard(keys, [&](Shard& s, size_t i, uint64_t hash, const float* row) {
    if (!always && row == nullptr && admitted_row(s, keys[i], hash) == nullptr) return;
    bool added = false;
    float* g = s.pending.insert(keys[i], hash, added);
    const float* pushed = grads.data() + i * push_width_;
    for (size_t d = 0; d < push_width_; ++d) g[d] += pushed[d];
  }, grads.data(), push_width_);
}

void SparseTable::apply_pending(int divisor) {
  const size_t first_gradient = ctr() ? 2 : 0;  // a CTR push's show and click are summed, not averaged
  for (auto& shard : shards_) {
    Shard& s = *shard;
    std::lock_guard lock(s.mutex);
    std::optional<DiskTier::Batch> batch;
    if (disk_ && s.pending.size() > 0) {
      std::vector<uint64_t> keys(s.pending.size()), hashes(s.pending.size());
      for (size_t p = 0; p < s.pending.size(); ++p) hashes[p] = RowStore::hash(keys[p] = s.pending.key_at(p));
      bring_in(s, keys, hashes, batch.emplace());
    }
    for (size_t p = 0; p < s.pending.size(); ++p) {
      float* g = s.pending.at(p);
      for (size_t d = first_gradient; d < push_width_; ++d) g[d] /= static_cast<float>(divisor);
      const uint64_t key = s.pending.key_at(p);
      apply(created_row(s, key, RowStore::hash(key)), g);
    }
    s.pending.clear();
    if (batch) settle(s, *batch);
  }
}

void SparseTable::add(std::span<const uint64_t> keys, std::span<const float> delta) {
  check_sizes(keys, delta.size(), push_width_, "add");
  by_shard(keys, [&](Shard& s, size_t i, uint64_t hash, float* row) {
    if (row == nullptr) row = admitted_row(s, keys[i], hash);
    if (row != nullptr) add_to(row, delta.data() + i * push_width_);
  }, delta.data(), push_width_);
}

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
    throw std::runtime_error(fmt::format("sparse table {} holds rows of {} floats where this model's have {} (another "
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
  if (ctr()) throw std::runtime_error(fmt::format("sparse table {}: a format 1 or 2 checkpoint holds no CTR rows", spec_.name));
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
