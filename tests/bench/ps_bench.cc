// ps_bench: parameter-server throughput over loopback. Run with paddle-launch
// (scripts/bench_ps.sh): the server holds a 64 MB dense table, a plain sparse table of dim 9 and
// a CTR table of dim 8 (adagrad), applying pushes as they arrive; each worker times sparse
// pull+push of batches of 10k and 1M random keys and dense pull and push of the whole 64 MB
// table; worker 0 prints. Then, with PS_BENCH_CTR_KEYS (resident key counts, comma-separated),
// worker 0 fills the CTR table to each count with random 64-bit keys, every worker times
// pull+push of 1M resident keys at once, and worker 0 reads the bytes per row (STATS), times a
// shrink, and up to PS_BENCH_SAVE_KEYS rows the all, base and delta saves.
//
// `ps_bench --in-process COUNTS` (no launcher) times the CTR table alone, in this process, at each
// resident count: pull+push of 1M resident keys in the server's request size, on one thread and
// with a server's helper threads. It is the ceiling of the figures above: the same work without
// a worker, a socket or a second process on the cores.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <random>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "collective/rendezvous.h"
#include "common/heap.h"
#include "common/parse.h"
#include "ps/client/client.h"
#include "ps/table/helper_pool.h"
#include "ps/server/server.h"
#include "ps/table/sparse_table.h"
#include "ps/table_spec.h"
#include "runtime/distributed/topology.h"

using namespace paddle;
using Clock = std::chrono::steady_clock;

namespace {

constexpr size_t kCtrDim = 8;
constexpr uint32_t kCtrTable = 1;
// A CTR row's raw bytes: key 8, show/click/unseen_days/delta_score 16, embed_w and its g2sum 8,
// embedx 28 and its g2sum 4.
constexpr double kCtrRawRowBytes = 64;

ps::SparseTableSpec ctr_table() {
  ps::SparseTableSpec spec{.name = "ctr", .dim = kCtrDim, .seed = 2};
  spec.accessor = ps::SparseTableSpec::Accessor::kCtr;
  return spec;  // adagrad on embed_w and embedx: the CtrAccessorSpec defaults
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The i-th resident key: random 64-bit keys that need no list to sample from.
uint64_t resident_key(uint64_t i) {
  uint64_t x = i + 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Pushes show, click and small gradients for `keys` to the CTR table.
void push_ctr(ps::PsClient& client, const std::vector<uint64_t>& keys, float show, float click) {
  std::vector<float> rows(keys.size() * (2 + kCtrDim), 0.001f);
  for (size_t i = 0; i < keys.size(); ++i) {
    rows[i * (2 + kCtrDim)] = show;
    rows[i * (2 + kCtrDim) + 1] = click;
  }
  client.push_sparse(kCtrTable, keys, rows);
}

uint64_t directory_bytes(const std::filesystem::path& dir) {
  uint64_t bytes = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir)) bytes += f.file_size();
  return bytes;
}

void time_saves(ps::PsClient& client, uint64_t resident) {
  const auto root = std::filesystem::temp_directory_path() / fmt::format("ps_bench_saves_{}", ::getpid());
  std::mt19937_64 rng(3);
  for (ps::SaveMode mode : {ps::SaveMode::kAll, ps::SaveMode::kBase, ps::SaveMode::kDelta}) {
    if (mode == ps::SaveMode::kDelta) {  // a tenth of the rows pushed since the last save
      std::vector<uint64_t> keys(resident / 10);
      for (auto& k : keys) k = resident_key(rng() % resident);
      push_ctr(client, keys, 1, 1);
    }
    const auto dir = root / ps::save_mode_name(mode);
    std::filesystem::create_directories(dir);
    const auto start = Clock::now();
    client.save(dir.string(), mode);
    fmt::print("  save {:5}: {:6.2f} s, {:8.1f} MB\n", ps::save_mode_name(mode), seconds_since(start),
               static_cast<double>(directory_bytes(dir)) / 1e6);
  }
  std::filesystem::remove_all(root);
}

// Fills the CTR table to each resident count of PS_BENCH_CTR_KEYS (worker 0) and measures it:
// every worker pulls and pushes 1M resident keys per round, all at once between two barriers;
// worker 0 reports the keys/s of all of them, the memory and shrink of every server, and the saves.
void bench_ctr(ps::PsClient& client, int worker, int workers) {
  const char* counts = std::getenv("PS_BENCH_CTR_KEYS");
  if (counts == nullptr || *counts == 0) return;
  const char* save_limit = std::getenv("PS_BENCH_SAVE_KEYS");
  const uint64_t max_saved = save_limit ? std::stoull(save_limit) : 10000000;
  const bool report = worker == 0;
  uint64_t resident = 0;
  std::mt19937_64 rng(7 + static_cast<uint64_t>(worker));
  constexpr int kRounds = 5;
  constexpr size_t kKeys = 1000000;
  for (const std::string& count : paddle::common::split_list(counts, "PS_BENCH_CTR_KEYS")) {
    const uint64_t target = std::stoull(count);
    auto start = Clock::now();
    for (; resident < target;) {  // score 2: every row passes the base threshold
      std::vector<uint64_t> keys(std::min<uint64_t>(kKeys, target - resident));
      for (auto& k : keys) k = resident_key(resident++);
      if (report) push_ctr(client, keys, 2, 2);
    }
    client.barrier();
    if (report)
      fmt::print("CTR table dim {} adagrad, {} resident keys, {} server(s), {} worker(s) (filled in {:.1f} s):\n", kCtrDim,
                 target, client.servers(), workers, seconds_since(start));
    std::vector<std::vector<uint64_t>> rounds(kRounds, std::vector<uint64_t>(kKeys));
    for (auto& keys : rounds)
      for (auto& k : keys) k = resident_key(rng() % resident);
    std::vector<float> pushed(kKeys * (2 + kCtrDim), 0.001f);
    for (size_t i = 0; i < kKeys; ++i) pushed[i * (2 + kCtrDim)] = 1;  // a show, no click
    client.barrier();
    start = Clock::now();
    for (const auto& keys : rounds) {
      auto rows = client.pull_sparse(kCtrTable, keys);
      client.push_sparse(kCtrTable, keys, pushed);
    }
    client.barrier();
    const double seconds = seconds_since(start);
    if (!report) continue;
    fmt::print("  pull+push of 1M resident keys per worker: {:10.0f} keys/s in all\n",
               static_cast<double>(kKeys) * kRounds * workers / seconds);
    ps::TableMemory m;
    for (const ps::ServerMemory& server : client.memory()) {
      const ps::TableMemory& t = server.tables.back();
      m.rows += t.rows;
      m.value_bytes += t.value_bytes;
      m.index_bytes += t.index_bytes;
    }
    const double per_row = static_cast<double>(m.value_bytes + m.index_bytes) / static_cast<double>(m.rows);
    fmt::print("  memory: {} rows, {:.1f} MB values + {:.1f} MB index: {:.1f} B/row allocated, {:.2f}x the raw {} B\n",
               m.rows, m.value_bytes / 1e6, m.index_bytes / 1e6, per_row, per_row / kCtrRawRowBytes, kCtrRawRowBytes);
    start = Clock::now();
    uint64_t before = 0, after = 0;
    for (const ps::ShrinkReport& server : client.shrink()) {
      before += server.tables.back().rows_before;
      after += server.tables.back().rows_after;
    }
    fmt::print("  shrink: {:.3f} s per million rows ({} -> {} rows)\n", seconds_since(start) * 1e6 / static_cast<double>(m.rows),
               before, after);
    if (target <= max_saved) time_saves(client, resident);
  }
  client.barrier();
}

// The --in-process mode in the file comment.
void bench_ctr_in_process(const std::string& counts) {
  constexpr size_t kRequestKeys = 16384;  // a PsClient request's keys (ps/client/client.cc)
  constexpr size_t kKeys = 1000000;
  const size_t helpers = std::max(1u, std::thread::hardware_concurrency()) - 1;
  for (const std::string& count : paddle::common::split_list(counts, "--in-process")) {
    const uint64_t resident = std::stoull(count);
    for (size_t threads : {size_t{0}, helpers}) {
      ps::SparseTable table(ctr_table(), ps::UpdateRule{});
      ps::HelperPool pool(threads);
      if (threads > 0) table.set_helpers(&pool);
      std::vector<float> pushed(kRequestKeys * (2 + kCtrDim), 0.001f);
      std::vector<uint64_t> keys(kRequestKeys);
      for (uint64_t filled = 0; filled < resident; filled += kRequestKeys) {
        keys.resize(std::min<uint64_t>(kRequestKeys, resident - filled));
        for (size_t i = 0; i < keys.size(); ++i) keys[i] = resident_key(filled + i);
        table.push(keys, std::span<const float>(pushed.data(), keys.size() * (2 + kCtrDim)));
      }
      std::mt19937_64 rng(7);
      std::vector<std::vector<uint64_t>> requests(kKeys / kRequestKeys, std::vector<uint64_t>(kRequestKeys));
      for (auto& request : requests)
        for (auto& k : request) k = resident_key(rng() % resident);
      std::vector<float> pulled(kRequestKeys * kCtrDim);
      const auto start = Clock::now();
      for (const auto& request : requests) {
        table.pull(request, pulled.data());
        table.push(request, pushed);
      }
      const double keys_done = static_cast<double>(requests.size() * kRequestKeys);
      const double seconds = seconds_since(start);
      fmt::print("CTR table alone, {:>9} resident keys, {} + {} helper thread(s): {:10.0f} keys/s ({:.0f} ns/key)\n", resident,
                 1, threads, keys_done / seconds, seconds * 1e9 / keys_done);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--in-process") {
    bench_ctr_in_process(argv[2]);
    return 0;
  }
  paddle::common::keep_freed_memory_in_heap();  // as train does
  auto topo = runtime::topology_from_environment(runtime::current_environment());
  constexpr size_t kDense = 16u << 20;  // floats: 64 MB
  constexpr size_t kDim = 9;
  ps::TableSpecs tables;
  tables.dense.push_back({"dense", kDense});
  tables.sparse.push_back({"sparse", kDim, /*seed=*/1});
  tables.sparse.push_back(ctr_table());
  if (topo.is_server()) {
    auto [ip, port] = paddle::common::parse_endpoint(topo.current_endpoint, "this server's endpoint");
    ps::ServerOptions o;
    o.ip = ip;
    o.port = port;
    o.workers = topo.trainer_num;
    o.server_index = topo.server_index;
    o.server_count = static_cast<int>(topo.server_endpoints.size());
    o.sync = false;
    ps::ParameterServer server(o, ps::build_server_tables(tables, o.server_index, o.server_count));
    server.run();
    return 0;
  }
  ps::PsClient client(topo.server_endpoints, tables, {});
  std::mt19937_64 rng(static_cast<uint64_t>(topo.trainer_id) + 1);
  const bool report = topo.trainer_id == 0;
  if (report) fmt::print("{} worker(s), {} server(s)\n", topo.trainer_num, topo.server_endpoints.size());
  for (size_t batch : {size_t{10000}, size_t{1000000}}) {
    std::vector<uint64_t> keys(batch);
    for (auto& k : keys) k = rng() % 10000000;
    std::vector<float> grads(batch * kDim, 0.001f);
    client.push_sparse(0, keys, grads);  // create the rows first
    const int rounds = batch > 100000 ? 3 : 30;
    auto start = Clock::now();
    for (int r = 0; r < rounds; ++r) {
      auto rows = client.pull_sparse(0, keys);
      client.push_sparse(0, keys, grads);
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count() / rounds;
    const double bytes = static_cast<double>(batch) * (2 * sizeof(uint64_t) + 2 * kDim * sizeof(float));
    if (report)
      fmt::print("sparse pull+push, {:>7} keys x dim {}: {:8.2f} ms  {:10.0f} keys/s  {:7.1f} MB/s (per worker)\n", batch,
                 kDim, seconds * 1e3, batch / seconds, bytes / seconds / 1e6);
  }
  std::vector<float> dense(kDense, 0.001f);
  client.push_dense(0, dense);
  auto start = Clock::now();
  const int rounds = 3;
  for (int r = 0; r < rounds; ++r) client.push_dense(0, dense);
  const double push = std::chrono::duration<double>(Clock::now() - start).count() / rounds;
  start = Clock::now();
  std::vector<float> pulled(kDense);  // as a trainer keeps its dense parameters from step to step
  for (int r = 0; r < rounds; ++r) client.pull_dense_into(0, pulled);
  const double pull = std::chrono::duration<double>(Clock::now() - start).count() / rounds;
  const double gigabytes = static_cast<double>(kDense * sizeof(float)) / 1e9;
  if (report)
    fmt::print("dense 64 MB: push {:.3f} GB/s, pull {:.3f} GB/s (per worker)\n", gigabytes / push, gigabytes / pull);
  bench_ctr(client, topo.trainer_id, topo.trainer_num);
  client.stop_worker();
  return 0;
}
