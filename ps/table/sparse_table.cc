// SparseTable (sparse_table.h): its rows, and the batches of pulls and pushes taken shard by
// shard; the disk tier's side is in sparse_table_tier.cc, saves and loads in
// sparse_table_saves.cc, shrink and the memory report in sparse_table_upkeep.cc.
#include "ps/table/sparse_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>


namespace paddle::ps {
namespace {

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

}  // namespace paddle::ps
