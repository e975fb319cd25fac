#include "ps/table/tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "ps/table/table_io.h"

namespace paddle::ps {
using table_io::read;
using table_io::read_counted;
using table_io::write;
using table_io::write_counted;

DenseTable::DenseTable(size_t size, UpdateRule rule)
    : rule_(rule), values_(size), state_(size * rule.state_width()), pending_(size) {}

void DenseTable::check_size(size_t n, const char* what) const {
  if (n != values_.size())
    throw std::invalid_argument(fmt::format("dense {}: {} values for a block of {}", what, n, values_.size()));
}

void DenseTable::set(std::span<const float> values) {
  check_size(values.size(), "init");
  std::lock_guard lock(mutex_);
  std::copy(values.begin(), values.end(), values_.begin());
}

std::vector<float> DenseTable::pull() {
  std::lock_guard lock(mutex_);
  return values_;
}

void DenseTable::pull(size_t begin, size_t count, float* out) {
  if (begin > values_.size() || count > values_.size() - begin)
    throw std::invalid_argument(fmt::format("dense pull of [{}, {}) from a block of {}", begin, begin + count, values_.size()));
  std::lock_guard lock(mutex_);
  std::copy_n(values_.begin() + static_cast<std::ptrdiff_t>(begin), count, out);
}

void DenseTable::push(std::span<const float> grads) {
  check_size(grads.size(), "push");
  std::lock_guard lock(mutex_);
  rule_.apply(values_.data(), state_.data(), grads.data(), values_.size(), ++steps_);
}

void DenseTable::accumulate(std::span<const float> grads) {
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

void DenseTable::add(std::span<const float> delta) {
  check_size(delta.size(), "add");
  std::lock_guard lock(mutex_);
  for (size_t i = 0; i < delta.size(); ++i) values_[i] += delta[i];
}

void DenseTable::save(std::ostream& out) {
  std::lock_guard lock(mutex_);
  write<int64_t>(out, steps_);
  write_counted(out, values_);
  write_counted(out, state_);
}

void DenseTable::load(std::istream& in) {
  std::lock_guard lock(mutex_);
  steps_ = read<int64_t>(in);
  values_ = read_counted(in, values_.size());
  state_ = read_counted(in, state_.size());
}

TableMemory DenseTable::memory(const std::string& name) {
  std::lock_guard lock(mutex_);
  return TableMemory{name, values_.size(),
                     (values_.capacity() + state_.capacity() + pending_.capacity()) * sizeof(float), 0};
}

ShrinkReport shrink_tables(ServerTables& tables, int server) {
  ShrinkReport report{server, {}};
  for (auto& t : tables.sparse) report.tables.push_back(t->shrink());
  return report;
}

ServerMemory tables_memory(ServerTables& tables, int server) {
  ServerMemory memory{server, {}};
  for (size_t i = 0; i < tables.dense.size(); ++i)
    memory.tables.push_back(
        tables.dense[i]->memory(i < tables.dense_names.size() ? tables.dense_names[i] : fmt::format("dense{}", i)));
  for (auto& t : tables.sparse) memory.tables.push_back(t->memory());
  return memory;
}

std::string describe(const ServerMemory& memory) {
  std::string line = fmt::format("server {} memory:", memory.server);
  const char* separator = " ";
  for (const TableMemory& t : memory.tables) {
    line += fmt::format("{}{} rows {}, values {:.1f} MiB, index {:.1f} MiB", separator, t.table, t.rows,
                        static_cast<double>(t.value_bytes) / (1 << 20), static_cast<double>(t.index_bytes) / (1 << 20));
    if (t.tier.tiered)
      line += fmt::format(" (memory {} rows, disk {} rows {:.1f} MiB, RocksDB memory {:.1f} MiB, hit rate {:.3f}, disk "
                          "reads {:.0f}/s, evictions {:.0f}/s)",
                          t.tier.memory_rows, t.tier.disk_rows, static_cast<double>(t.tier.disk_bytes) / (1 << 20),
                          static_cast<double>(t.tier.database_bytes) / (1 << 20), t.tier.hit_rate,
                          t.tier.disk_reads_per_s, t.tier.evictions_per_s);
    separator = "; ";
  }
  return line;
}

std::string describe(const ShrinkReport& report) {
  std::string text = fmt::format("server {}:", report.server);
  for (const TableShrink& t : report.tables) text += fmt::format(" {} {} -> {} rows", t.table, t.rows_before, t.rows_after);
  return text;
}

}  // namespace paddle::ps
