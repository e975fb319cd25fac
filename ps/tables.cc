#include "ps/tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace paddle::ps {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

template <typename T>
void write(std::ostream& out, const T& v) {
  out.write(reinterpret_cast<const char*>(&v), sizeof v);
}

template <typename T>
T read(std::istream& in) {
  T v;
  if (!in.read(reinterpret_cast<char*>(&v), sizeof v)) throw std::runtime_error("table data ends early");
  return v;
}

void write_floats(std::ostream& out, const std::vector<float>& v) {
  write<uint64_t>(out, v.size());
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
}

std::vector<float> read_floats(std::istream& in, size_t expected) {
  const auto n = read<uint64_t>(in);
  if (n != expected) throw std::runtime_error(fmt::format("table data holds {} values where {} were expected", n, expected));
  std::vector<float> v(n);
  if (!in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * sizeof(float))))
    throw std::runtime_error("table data ends early");
  return v;
}

}  // namespace

// ---- DenseTable ----

DenseTable::DenseTable(size_t size, UpdateRule rule)
    : rule_(rule), values_(size), state_(size * rule.state_width()), pending_(size) {}

void DenseTable::check_size(size_t n, const char* what) const {
  if (n != values_.size())
    throw std::invalid_argument(fmt::format("dense {}: {} values for a block of {}", what, n, values_.size()));
}

void DenseTable::set(const std::vector<float>& values) {
  check_size(values.size(), "init");
  std::lock_guard lock(mutex_);
  values_ = values;
}

std::vector<float> DenseTable::pull() {
  std::lock_guard lock(mutex_);
  return values_;
}

void DenseTable::push(const std::vector<float>& grads) {
  check_size(grads.size(), "push");
  std::lock_guard lock(mutex_);
  rule_.apply(values_.data(), state_.data(), grads.data(), values_.size(), ++steps_);
}

void DenseTable::accumulate(const std::vector<float>& grads) {
  check_size(grads.size(), "push");
  std::lock_guard lock(mutex_);
  for (size_t i = 0; i < grads.size(); ++i) pending_[i] += grads[i];
  has_pending_ = true;
}

void DenseTable::apply_pending(int divisor) {
  std::lock_guard lock(mutex_);
  if (!has_pending_) return;
  for (auto& g : pending_) g /= static_cast<float>(divisor);
  rule_.apply(values_.data(), state_.data(), pending_.data(), values_.size(), ++steps_);
  std::fill(pending_.begin(), pending_.end(), 0.0f);
  has_pending_ = false;
}

void DenseTable::add(const std::vector<float>& delta) {
  check_size(delta.size(), "add");
  std::lock_guard lock(mutex_);
  for (size_t i = 0; i < delta.size(); ++i) values_[i] += delta[i];
}

void DenseTable::save(std::ostream& out) {
  std::lock_guard lock(mutex_);
  write<int64_t>(out, steps_);
  write_floats(out, values_);
  write_floats(out, state_);
}

void DenseTable::load(std::istream& in) {
  std::lock_guard lock(mutex_);
  steps_ = read<int64_t>(in);
  values_ = read_floats(in, values_.size());
  state_ = read_floats(in, state_.size());
}

// ---- SparseTable ----

SparseTable::SparseTable(size_t dim, UpdateRule rule, uint64_t seed, float init_range, size_t shards)
    : dim_(dim), rule_(rule), seed_(seed), init_range_(init_range), shards_(shards) {}

void SparseTable::initial_values(uint64_t key, float* out) const {
  uint64_t state = splitmix64(seed_ ^ splitmix64(key));
  for (size_t i = 0; i < dim_; ++i) {
    state = splitmix64(state);
    const double unit = static_cast<double>(state >> 11) * (1.0 / 9007199254740992.0);  // [0,1)
    out[i] = static_cast<float>((2.0 * unit - 1.0) * init_range_);
  }
}

SparseTable::Row& SparseTable::row(Shard& shard, uint64_t key) {
  auto [it, created] = shard.rows.try_emplace(key);
  if (created) {
    it->second.values.assign(dim_ * (1 + rule_.state_width()), 0.0f);
    initial_values(key, it->second.values.data());
  }
  return it->second;
}

void SparseTable::check_sizes(const std::vector<uint64_t>& keys, const std::vector<float>& grads) const {
  if (grads.size() != keys.size() * dim_)
    throw std::invalid_argument(fmt::format("sparse push: {} gradient values for {} keys of dim {}", grads.size(),
                                            keys.size(), dim_));
}

size_t SparseTable::rows() {
  size_t n = 0;
  for (auto& s : shards_) {
    std::lock_guard lock(s.mutex);
    n += s.rows.size();
  }
  return n;
}

std::vector<float> SparseTable::pull(const std::vector<uint64_t>& keys) {
  std::vector<float> out(keys.size() * dim_, 0.0f);
  for (size_t i = 0; i < keys.size(); ++i) {
    Shard& s = shard_of(keys[i]);
    std::lock_guard lock(s.mutex);
    auto it = s.rows.find(keys[i]);
    float* row = out.data() + i * dim_;
    if (it != s.rows.end()) std::copy_n(it->second.values.begin(), dim_, row);
    else initial_values(keys[i], row);
  }
  return out;
}

void SparseTable::push(const std::vector<uint64_t>& keys, const std::vector<float>& grads) {
  check_sizes(keys, grads);
  for (size_t i = 0; i < keys.size(); ++i) {
    Shard& s = shard_of(keys[i]);
    std::lock_guard lock(s.mutex);
    Row& r = row(s, keys[i]);
    rule_.apply(r.values.data(), r.values.data() + dim_, grads.data() + i * dim_, dim_, ++r.steps);
  }
}

void SparseTable::accumulate(const std::vector<uint64_t>& keys, const std::vector<float>& grads) {
  check_sizes(keys, grads);
  for (size_t i = 0; i < keys.size(); ++i) {
    Shard& s = shard_of(keys[i]);
    std::lock_guard lock(s.mutex);
    auto& g = s.pending[keys[i]];
    if (g.empty()) g.assign(dim_, 0.0f);
    for (size_t d = 0; d < dim_; ++d) g[d] += grads[i * dim_ + d];
  }
}

void SparseTable::apply_pending(int divisor) {
  for (auto& s : shards_) {
    std::lock_guard lock(s.mutex);
    for (auto& [key, g] : s.pending) {
      for (auto& v : g) v /= static_cast<float>(divisor);
      Row& r = row(s, key);
      rule_.apply(r.values.data(), r.values.data() + dim_, g.data(), dim_, ++r.steps);
    }
    s.pending.clear();
  }
}

void SparseTable::add(const std::vector<uint64_t>& keys, const std::vector<float>& delta) {
  check_sizes(keys, delta);
  for (size_t i = 0; i < keys.size(); ++i) {
    Shard& s = shard_of(keys[i]);
    std::lock_guard lock(s.mutex);
    Row& r = row(s, keys[i]);
    for (size_t d = 0; d < dim_; ++d) r.values[d] += delta[i * dim_ + d];
  }
}

void SparseTable::save(std::ostream& out) {
  write<uint64_t>(out, rows());
  for (auto& s : shards_) {
    std::lock_guard lock(s.mutex);
    for (auto& [key, r] : s.rows) {
      write<uint64_t>(out, key);
      write<int64_t>(out, r.steps);
      write_floats(out, r.values);
    }
  }
}

void SparseTable::load(std::istream& in) {
  const auto count = read<uint64_t>(in);
  for (auto& s : shards_) {
    std::lock_guard lock(s.mutex);
    s.rows.clear();
    s.pending.clear();
  }
  for (uint64_t i = 0; i < count; ++i) {
    const auto key = read<uint64_t>(in);
    Row r;
    r.steps = read<int64_t>(in);
    r.values = read_floats(in, dim_ * (1 + rule_.state_width()));
    Shard& s = shard_of(key);
    std::lock_guard lock(s.mutex);
    s.rows[key] = std::move(r);
  }
}

}  // namespace paddle::ps
