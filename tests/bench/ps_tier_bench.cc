// ps_tier_bench KEYS BUDGET_MB DIR: a CTR sparse table of dim 8 (adagrad) on disk (ps/table/disk_tier.h)
// under DIR, with BUDGET_MB of memory for its hot rows, alone in this process with one helper
// thread as a server has on two cores. It loads KEYS rows (a generated all save), then times
// pull+push of 16k-key requests (a PsClient request's size):
//
//   skewed    keys drawn Zipf(1.1) over all KEYS rows;
//   prefetch  the same, each request's keys prefetched (SparseTable::prefetch) after the pull of the
//             one before, as a worker's PREFETCH_SPARSE arrives before it computes; keys/s over the
//             pulls and pushes, and the prefetch's time per request apart;
//   uniform   keys drawn uniformly over all KEYS rows;
//   hot set   Zipf(1.1) over as many rows as half the budget holds, once they are in memory,
//             beside a memory-only table of those rows on the same requests.
//
// and prints keys/s, the hit rate, disk reads and evictions per second, the disk bytes per row,
// and the times of an all save of every row and of loading it back. The rows are random 64-bit
// keys; a rank's key is a hash of the rank, so hot keys fall in every shard.

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <istream>
#include <streambuf>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ps/table/helper_pool.h"
#include "ps/table/sparse_table.h"

using namespace paddle;
using Clock = std::chrono::steady_clock;

namespace {

constexpr size_t kDim = 8;
constexpr size_t kPushWidth = 2 + kDim;
constexpr size_t kRequestKeys = 16384;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

uint64_t key_of_rank(uint64_t rank) {
  uint64_t x = rank + 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Ranks 0 .. n-1 with P(rank r) proportional to (r + 1)^-exponent, by rejection-inversion
// (Hörmann and Derflinger, 1996): no table, O(1) per draw, for any n.
class Zipf {
 public:
  Zipf(uint64_t n, double exponent)
      : n_(static_cast<double>(n)), q_(exponent), h_first_(integral(1.5) - 1.0), h_last_(integral(n_ + 0.5)),
        squeeze_(2.0 - inverse(integral(2.5) - density(2.0))) {}

  uint64_t operator()(std::mt19937_64& random) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (;;) {
      const double u = h_last_ + unit(random) * (h_first_ - h_last_);
      const double x = inverse(u);
      const double k = std::clamp(std::floor(x + 0.5), 1.0, n_);
      if (k - x <= squeeze_ || u >= integral(k + 0.5) - density(k)) return static_cast<uint64_t>(k) - 1;
    }
  }

 private:
  double density(double x) const { return std::exp(-q_ * std::log(x)); }
  // The integral of density from 1 to x, up to a constant: (x^(1-q) - 1) / (1 - q).
  double integral(double x) const { return std::expm1((1.0 - q_) * std::log(x)) / (1.0 - q_); }
  double inverse(double y) const { return std::exp(std::log1p(y * (1.0 - q_)) / (1.0 - q_)); }

  double n_, q_, h_first_, h_last_, squeeze_;
};

ps::SparseTableSpec ctr_table(const std::string& dir, uint64_t memory_rows) {
  ps::SparseTableSpec spec{.name = "ctr", .dim = kDim, .seed = 2};
  spec.accessor = ps::SparseTableSpec::Accessor::kCtr;
  if (!dir.empty()) spec.storage = {ps::StorageSpec::Kind::kSsd, dir, memory_rows};
  return spec;
}

std::vector<float> pushed_rows() {
  std::vector<float> rows(kRequestKeys * kPushWidth, 0.001f);
  for (size_t i = 0; i < kRequestKeys; ++i) rows[i * kPushWidth] = 1.0f;  // show 1, click 0
  return rows;
}

// An all save of `rows` rows, made as it is read: rank rows - 1 first (the coldest, so that the
// rows a load keeps in memory are the ones the streams want least), each row a copy of `row` under
// its key. It fills a tiered table at disk speed, where pushing new keys would look each one up.
class GeneratedSave : public std::streambuf {
 public:
  GeneratedSave(uint64_t rows, std::vector<float> row) : rows_(rows), row_(std::move(row)) {
    const uint64_t header[2] = {rows_, row_.size()};
    buffer_.assign(reinterpret_cast<const char*>(header), reinterpret_cast<const char*>(header) + sizeof header);
    setg(buffer_.data(), buffer_.data(), buffer_.data() + buffer_.size());
  }

 protected:
  int_type underflow() override {
    if (next_ == rows_) return traits_type::eof();
    buffer_.clear();
    const size_t row_bytes = row_.size() * sizeof(float);
    for (int n = 0; n < 4096 && next_ < rows_; ++n, ++next_) {
      const uint64_t key = key_of_rank(rows_ - 1 - next_);
      buffer_.insert(buffer_.end(), reinterpret_cast<const char*>(&key), reinterpret_cast<const char*>(&key) + 8);
      buffer_.insert(buffer_.end(), reinterpret_cast<const char*>(row_.data()), reinterpret_cast<const char*>(row_.data()) + row_bytes);
    }
    setg(buffer_.data(), buffer_.data(), buffer_.data() + buffer_.size());
    return traits_type::to_int_type(buffer_[0]);
  }

 private:
  uint64_t rows_, next_ = 0;
  std::vector<float> row_;
  std::vector<char> buffer_;
};

void fill_by_load(ps::SparseTable& table, uint64_t rows) {
  ps::SparseTable probe(ctr_table("", 0), ps::UpdateRule{});
  const std::vector<float> pushed = pushed_rows();
  const std::vector<uint64_t> one = {1};
  probe.push(one, std::span<const float>(pushed.data(), kPushWidth));
  GeneratedSave save(rows, *probe.stored_row(1));
  std::istream in(&save);
  table.load(in);
}

void fill(ps::SparseTable& table, uint64_t rows) {
  const std::vector<float> pushed = pushed_rows();
  std::vector<uint64_t> keys;
  for (uint64_t done = 0; done < rows; done += kRequestKeys) {
    keys.resize(std::min<uint64_t>(kRequestKeys, rows - done));
    for (size_t i = 0; i < keys.size(); ++i) keys[i] = key_of_rank(done + i);
    table.push(keys, std::span<const float>(pushed.data(), keys.size() * kPushWidth));
  }
}

struct StreamTimes {
  double keys_per_s = 0;        // pull+push keys over the time of the pulls and pushes
  double prefetch_ms = 0;       // per request, when prefetched
  double overall_keys_per_s = 0;  // over all the time, prefetches included: the server's own rate
};

// Pull+push of `requests` requests of ranks from `draw`. With `prefetch`, each request's pull is
// followed by a prefetch of the next request's keys, as a worker sends it before it computes:
// its time is what the worker's compute must cover, and is kept apart from the keys/s.
template <typename Draw>
StreamTimes pull_push(ps::SparseTable& table, size_t requests, Draw draw, uint64_t seed, bool prefetch = false) {
  std::mt19937_64 random(seed);
  auto drawn = [&](std::vector<uint64_t>& batch) {
    for (auto& k : batch) k = key_of_rank(draw(random));
  };
  std::vector<uint64_t> batch(kRequestKeys), next(kRequestKeys);
  const std::vector<float> pushed = pushed_rows();
  std::vector<float> pulled(kRequestKeys * kDim);
  double busy = 0, prefetch_s = 0;
  drawn(batch);
  if (prefetch) table.prefetch(batch);
  for (size_t r = 0; r < requests; ++r) {
    if (r + 1 < requests) drawn(next);  // the draws are not timed
    auto begun = Clock::now();
    table.pull(batch, pulled.data());
    busy += seconds_since(begun);
    if (prefetch && r + 1 < requests) {
      begun = Clock::now();
      table.prefetch(next);
      prefetch_s += seconds_since(begun);
    }
    begun = Clock::now();
    table.push(batch, pushed);
    busy += seconds_since(begun);
    std::swap(batch, next);
  }
  const double keys = static_cast<double>(requests * kRequestKeys);
  return {keys / busy, 1e3 * prefetch_s / static_cast<double>(requests), keys / (busy + prefetch_s)};
}

void print_stream(const char* name, double keys_per_s, const ps::TableMemory& m) {
  fmt::print("  {:<9} {:>10.0f} keys/s   hit rate {:.3f}   disk reads {:>9.0f}/s   evictions {:>9.0f}/s\n", name, keys_per_s,
             m.tier.hit_rate, m.tier.disk_reads_per_s, m.tier.evictions_per_s);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    fmt::print(stderr, "usage: ps_tier_bench KEYS BUDGET_MB DIR\n");
    return 2;
  }
  const uint64_t keys = std::stoull(argv[1]);
  const uint64_t budget_mb = std::stoull(argv[2]);
  const std::filesystem::path dir = argv[3];
  std::filesystem::remove_all(dir);
  const ps::UpdateRule unused{};
  const uint64_t memory_rows = (budget_mb << 20) / ps::SparseTable::memory_row_bytes(ctr_table("x", 0), unused);
  ps::HelperPool helpers(std::max(1u, std::thread::hardware_concurrency()) - 1);

  ps::SparseTable table(ctr_table((dir / "tier").string(), memory_rows), unused);
  table.set_helpers(&helpers);
  auto start = Clock::now();
  fill_by_load(table, keys);
  const double fill_s = seconds_since(start);
  ps::TableMemory m = table.memory();
  fmt::print("CTR table of dim 8 on disk: {} rows, {} MB budget ({} rows in memory, {:.1f}%); loaded in {:.1f} s "
             "({:.0f} rows/s)\n",
             keys, budget_mb, memory_rows, 100.0 * static_cast<double>(memory_rows) / static_cast<double>(keys), fill_s,
             static_cast<double>(keys) / fill_s);

  // A shard over its share evicts a tenth of it at once, and then has that much room: each stream
  // runs long enough for its misses to fill that room one and a half times, so that evictions count.
  const uint64_t cycle_keys = memory_rows / 10;
  auto requests_for = [&](double miss_rate, size_t at_least) {
    return std::max<size_t>(at_least, static_cast<size_t>(1.5 * static_cast<double>(cycle_keys) / (miss_rate * kRequestKeys)));
  };
  Zipf skewed(keys, 1.1);
  pull_push(table, requests_for(0.08, 60), skewed, 1);  // warm: the hot rows into memory, the first evictions
  table.memory();  // the reports' rates count from here
  const double skewed_keys = pull_push(table, requests_for(0.08, 200), skewed, 2).keys_per_s;
  print_stream("skewed", skewed_keys, table.memory());
  const StreamTimes prefetched = pull_push(table, requests_for(0.08, 200), skewed, 5, true);
  print_stream("prefetch", prefetched.keys_per_s, table.memory());
  fmt::print("  (skewed, each request's keys prefetched while the one before it computes: {:.1f} ms of prefetch per "
             "request for the worker's compute to cover; {:.0f} keys/s counting the prefetches)\n",
             prefetched.prefetch_ms, prefetched.overall_keys_per_s);
  const double uniform_keys =
      pull_push(table, requests_for(0.4, 20), [&](std::mt19937_64& r) { return r() % keys; }, 3).keys_per_s;
  print_stream("uniform", uniform_keys, table.memory());

  const uint64_t hot = std::min<uint64_t>(keys, memory_rows / 2);
  Zipf hot_set(hot, 1.1);
  {
    std::vector<float> pulled(kRequestKeys * kDim);
    std::vector<uint64_t> batch;
    for (uint64_t done = 0; done < hot; done += kRequestKeys) {  // every hot row into memory
      batch.resize(std::min<uint64_t>(kRequestKeys, hot - done));
      for (size_t i = 0; i < batch.size(); ++i) batch[i] = key_of_rank(done + i);
      table.pull(batch, pulled.data());
    }
  }
  table.memory();
  const double tiered_hot = pull_push(table, 200, hot_set, 4).keys_per_s;
  const ps::TableMemory hot_report = table.memory();
  double memory_hot = 0;
  {
    ps::SparseTable in_memory(ctr_table("", 0), unused);
    in_memory.set_helpers(&helpers);
    fill(in_memory, hot);
    memory_hot = pull_push(in_memory, 200, hot_set, 4).keys_per_s;
  }
  print_stream("hot set", tiered_hot, hot_report);
  fmt::print("  hot set of {} rows in a memory-only table: {:.0f} keys/s; the tier at {:.2f}x of it\n", hot, memory_hot,
             tiered_hot / memory_hot);

  m = table.memory();
  fmt::print("  rows in memory {}, on disk {}; disk {:.1f} bytes per disk row (SST files {:.2f} GB), RocksDB memory {:.0f} MB\n",
             m.tier.memory_rows, m.tier.disk_rows,
             static_cast<double>(m.tier.disk_bytes) / static_cast<double>(std::max<uint64_t>(1, m.tier.disk_rows)),
             static_cast<double>(m.tier.disk_bytes) / 1e9, static_cast<double>(m.tier.database_bytes) / 1e6);

  const auto save_file = dir / "all.bin";
  start = Clock::now();
  uint64_t saved = 0;
  {
    std::ofstream out(save_file, std::ios::binary);
    saved = table.save(out);
  }
  const double save_s = seconds_since(start);
  const double save_gb = static_cast<double>(std::filesystem::file_size(save_file)) / 1e9;
  {
    ps::SparseTable loaded(ctr_table((dir / "loaded").string(), memory_rows), unused);
    start = Clock::now();
    std::ifstream in(save_file, std::ios::binary);
    loaded.load(in);
    const double load_s = seconds_since(start);
    fmt::print("  all save: {} rows, {:.2f} GB in {:.1f} s; loaded back into a tiered table in {:.1f} s ({} rows)\n", saved,
               save_gb, save_s, load_s, loaded.rows());
  }
  std::filesystem::remove_all(dir);
  return 0;
}
