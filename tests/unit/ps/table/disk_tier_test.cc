// DiskTier and the tiered SparseTable against a memory-only twin, over a real RocksDB: long
// because each case builds both tables and walks the same requests through them.
#include <doctest/doctest.h>

#include <sys/mount.h>
#include <unistd.h>

#include <fstream>
#include <future>
#include <map>
#include <random>
#include <sstream>

#include "common/error.h"
#include "ps/table/disk_tier.h"
#include "ps/client/client.h"
#include "ps/table/helper_pool.h"
#include "ps/server/server.h"
#include "ps/table/sparse_table.h"
#include "ps/table_spec.h"
#include "tests/unit/ps/ps_test_support.h"

using namespace paddle::ps;
using paddle::ps::testing::scratch_dir;

namespace {

const UpdateRule kUnused = UpdateRule::parse("sgd", 0.0f);

// A CTR table of dim 4 under adagrad; on disk with `memory_rows` in memory when `dir` is given.
SparseTableSpec ctr_spec(const std::string& dir = "", uint64_t memory_rows = 0) {
  SparseTableSpec spec{.name = "embedding", .dim = 4, .seed = 5};
  spec.accessor = SparseTableSpec::Accessor::kCtr;
  spec.ctr.embed_rule = SparseRuleSpec::parse("adagrad");
  spec.ctr.embedx_rule = spec.ctr.embed_rule;
  spec.ctr.delete_threshold = 0.5f;
  spec.ctr.delete_after_unseen_days = 2;
  if (!dir.empty()) spec.storage = {StorageSpec::Kind::kSsd, dir, memory_rows};
  return spec;
}

// The same batches to both tables: `batches` of 200 keys out of `keys`, skewed toward the low ones,
// each key's push (show, click, 4 gradients) drawn from one seeded stream.
void push_both(SparseTable& a, SparseTable& b, uint64_t keys, int batches, uint32_t seed) {
  std::mt19937_64 random(seed);
  for (int n = 0; n < batches; ++n) {
    std::vector<uint64_t> batch(200);
    std::vector<float> grads;
    for (auto& k : batch) {
      const uint64_t r = random() % keys;
      k = (r * r / keys) * 0x9e3779b97f4a7c15ULL;  // skewed, spread over the 64-bit range
      const float show = 1 + static_cast<float>(random() % 3);
      grads.insert(grads.end(), {show, static_cast<float>(random() % 2), 0.1f, -0.2f, 0.3f,
                                 static_cast<float>(random() % 100) / 100.0f - 0.5f});
    }
    CHECK(a.pull(batch) == b.pull(batch));
    a.push(batch, grads);
    b.push(batch, grads);
  }
}

std::map<uint64_t, std::vector<float>> rows_of(const std::string& saved) {
  std::istringstream in(saved);
  uint64_t count = 0, width = 0;
  in.read(reinterpret_cast<char*>(&count), 8);
  in.read(reinterpret_cast<char*>(&width), 8);
  std::map<uint64_t, std::vector<float>> rows;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t key;
    in.read(reinterpret_cast<char*>(&key), 8);
    std::vector<float> row(width);
    in.read(reinterpret_cast<char*>(row.data()), static_cast<std::streamsize>(width * sizeof(float)));
    REQUIRE(in);
    CHECK(rows.emplace(key, std::move(row)).second);  // each key once, in either tier
  }
  return rows;
}

// A 1 MiB tmpfs at `at`, unmounted at the end of the scope; nullopt (and a line saying why the test
// is skipped) without root and mount rights.
struct SmallDisk {
  std::filesystem::path at;
  ~SmallDisk() { ::umount2(at.c_str(), MNT_DETACH); }
};
std::unique_ptr<SmallDisk> small_disk(const std::filesystem::path& at) {
  std::filesystem::create_directories(at);
  if (::geteuid() != 0 || ::mount("tmpfs", at.c_str(), "tmpfs", 0, "size=1m") != 0) {
    MESSAGE("skipped: a full disk is made as a 1 MiB tmpfs, which needs root and mount rights");
    return nullptr;
  }
  auto disk = std::make_unique<SmallDisk>();  // (not from a SmallDisk temporary: its destructor would unmount)
  disk->at = at;
  return disk;
}

std::string saved(SparseTable& t, SaveMode mode = SaveMode::kAll) {
  std::ostringstream out;
  t.save(out, mode);
  return out.str();
}

}  // namespace

TEST_CASE("disk tier: rows round-trip, a batch's puts and deletes apply in order, a scan walks key order") {
  const auto dir = scratch_dir("disk-tier-rows");
  DiskTier tier("t", (dir / "db").string(), 3);
  DiskTier::Batch batch;
  const float a[3] = {1, 2, 3}, b[3] = {4, 5, 6};
  batch.put(9, a, 3);
  batch.put(UINT64_MAX, b, 3);
  batch.put(2, a, 3);
  batch.erase(2);
  tier.write(batch);
  CHECK(batch.size() == 0);
  std::vector<float> rows(9);
  std::vector<char> found;
  const std::vector<uint64_t> keys = {2, 9, UINT64_MAX};
  tier.read(keys, rows.data(), found);
  CHECK(found == std::vector<char>{0, 1, 1});
  CHECK(std::vector<float>(rows.begin() + 3, rows.end()) == std::vector<float>{1, 2, 3, 4, 5, 6});
  std::vector<uint64_t> walked;
  tier.scan([&](uint64_t key, const float* row) {
    walked.push_back(key);
    CHECK(row[0] == (key == 9 ? 1 : 4));
  });
  CHECK(walked == std::vector<uint64_t>{9, UINT64_MAX});
  tier.clear();
  walked.clear();
  tier.scan([&](uint64_t key, const float*) { walked.push_back(key); });
  CHECK(walked.empty());
}

TEST_CASE("disk tier: an earlier run's database is emptied; a directory of other files is refused and kept") {
  const auto dir = scratch_dir("disk-tier-open");
  {
    DiskTier tier("t", (dir / "db").string(), 1);
    DiskTier::Batch batch;
    const float v = 1;
    batch.put(1, &v, 1);
    tier.write(batch);
  }
  DiskTier again("t", (dir / "db").string(), 1);
  int rows = 0;
  again.scan([&](uint64_t, const float*) { ++rows; });
  CHECK(rows == 0);
  std::filesystem::create_directories(dir / "mine");
  std::ofstream(dir / "mine" / "notes.txt") << "keep me\n";
  const std::string expected =
      "sparse table embedding: the disk tier " + (dir / "mine").string() + " holds files that are not a RocksDB database";
  CHECK_THROWS_WITH_AS(DiskTier("embedding", (dir / "mine").string(), 1), doctest::Contains(expected.c_str()),
                       paddle::common::DataError);
  CHECK(std::filesystem::exists(dir / "mine" / "notes.txt"));
}

TEST_CASE("disk tier: a corrupt database, or one another tier holds open, is one line naming its directory") {
  const auto dir = scratch_dir("disk-tier-corrupt");
  std::filesystem::create_directories(dir / "corrupt");
  std::ofstream(dir / "corrupt" / "CURRENT") << "MANIFEST-000999\n";  // names a manifest that is not there
  const std::string corrupt = "sparse table wide: the disk tier " + (dir / "corrupt").string() + " is a corrupt or unreadable RocksDB database";
  CHECK_THROWS_WITH_AS(DiskTier("wide", (dir / "corrupt").string(), 1), doctest::Contains(corrupt.c_str()), DiskTierError);
  DiskTier first("wide", (dir / "held").string(), 1);
  {
    DiskTier::Batch batch;
    const float v = 1;
    batch.put(1, &v, 1);
    first.write(batch);
  }
  const std::string held = "the disk tier " + (dir / "held").string() + " is in use by another process";
  CHECK_THROWS_WITH_AS(DiskTier("wide", (dir / "held").string(), 1), doctest::Contains(held.c_str()), DiskTierError);
  std::vector<float> row(1);
  std::vector<char> found;
  const std::vector<uint64_t> one = {1};
  first.read(one, row.data(), found);
  CHECK(found[0] == 1);  // the holder's rows are untouched
}

TEST_CASE("tiered table: rows move both ways without loss, bit-exact beside a memory table") {
  const auto dir = scratch_dir("tier-both-ways");
  SparseTable memory(ctr_spec(), kUnused);
  SparseTable tiered(ctr_spec((dir / "t").string(), 16 * 8), kUnused);
  push_both(memory, tiered, 3000, 60, 1);
  const TableMemory m = tiered.memory();
  REQUIRE(m.tier.tiered);
  CHECK(m.tier.memory_rows <= 16 * 8);
  CHECK(m.tier.disk_rows > 1000);
  CHECK(m.tier.memory_rows + m.tier.disk_rows == memory.rows());
  CHECK(tiered.rows() == memory.rows());
  CHECK(tiered.memory().tier.hit_rate == 0.0);  // nothing looked up since the last report
  // Every row, wherever it lies, holds what the memory table's does: values, statistics, flags.
  CHECK(rows_of(saved(tiered)) == rows_of(saved(memory)));
  for (uint64_t k = 0; k < 3000; k += 7) {
    const uint64_t key = k * 0x9e3779b97f4a7c15ULL;
    CHECK(tiered.stored_row(key) == memory.stored_row(key));
  }
  // Pulling every key brings rows back from disk; the values match, the share in memory holds.
  std::vector<uint64_t> all;
  for (auto& [key, row] : rows_of(saved(memory))) all.push_back(key);
  for (size_t i = 0; i < all.size(); i += 100) {
    std::vector<uint64_t> batch(all.begin() + static_cast<long>(i), all.begin() + static_cast<long>(std::min(i + 100, all.size())));
    CHECK(tiered.pull(batch) == memory.pull(batch));
  }
  const TableMemory after = tiered.memory();
  CHECK(after.tier.memory_rows <= 16 * 8);
  CHECK(after.tier.disk_reads_per_s > 0);
  CHECK(after.tier.evictions_per_s > 0);
  CHECK(after.tier.hit_rate < 0.5);
}

TEST_CASE("tiered table: a batch's rows on several helper threads come out as on one") {
  const auto dir = scratch_dir("tier-helpers");
  HelperPool helpers(2);
  SparseTable memory(ctr_spec(), kUnused);
  SparseTable tiered(ctr_spec((dir / "t").string(), 16 * 64), kUnused);
  tiered.set_helpers(&helpers);
  std::mt19937_64 random(3);
  for (int n = 0; n < 6; ++n) {
    std::vector<uint64_t> batch(5000);
    for (auto& k : batch) k = random() % 20000;
    std::vector<float> grads(batch.size() * 6, 0.25f);
    CHECK(tiered.pull(batch) == memory.pull(batch));
    tiered.push(batch, grads);
    memory.push(batch, grads);
  }
  CHECK(rows_of(saved(tiered)) == rows_of(saved(memory)));
}

TEST_CASE("tiered table: a prefetch moves rows on disk into memory unchanged, outside the hit rate") {
  const auto dir = scratch_dir("tier-prefetch");
  // One shard of 100 rows: after a batch of 200 new keys it holds 90 of them, room for 10 more.
  SparseTable memory(ctr_spec(), kUnused, 0.01f, 1);
  SparseTable tiered(ctr_spec((dir / "t").string(), 100), kUnused, 0.01f, 1);
  auto batch_of = [](uint64_t b, uint64_t n) {
    std::vector<uint64_t> keys(n);
    for (uint64_t i = 0; i < n; ++i) keys[i] = (b * 200 + i) * 0x9e3779b97f4a7c15ULL;
    return keys;
  };
  for (uint64_t b = 0; b < 10; ++b) {
    const std::vector<uint64_t> keys = batch_of(b, 200);
    const std::vector<float> grads(keys.size() * 6, 0.1f * static_cast<float>(b + 1));
    tiered.push(keys, grads);
    memory.push(keys, grads);
  }
  TableMemory m = tiered.memory();
  REQUIRE(m.tier.memory_rows == 90);
  REQUIRE(m.tier.disk_rows == 1910);
  const std::string before = saved(memory);

  SUBCASE("a share of four times the keys or more: read all, evict as a batch does, the newest stay") {
    const std::vector<uint64_t> first = batch_of(0, 10), second = batch_of(1, 10);  // on disk since batch 1 and 2
    tiered.prefetch(first);
    m = tiered.memory();
    CHECK(m.tier.memory_rows == 100);
    CHECK(m.tier.disk_rows == 1900);
    CHECK(m.tier.hit_rate == 0.0);  // no lookups counted
    CHECK(m.tier.disk_reads_per_s > 0);
    CHECK(m.tier.evictions_per_s == 0.0);
    CHECK(tiered.pull(first) == memory.pull(first));  // the batch in progress
    CHECK(tiered.memory().tier.hit_rate == 1.0);
    tiered.prefetch(second);  // the next batch: over the share, so the oldest rows leave
    m = tiered.memory();
    CHECK(m.tier.memory_rows == 90);
    CHECK(m.tier.evictions_per_s > 0);
    CHECK(tiered.pull(second) == memory.pull(second));
    CHECK(tiered.pull(first) == memory.pull(first));
    CHECK(tiered.memory().tier.hit_rate == 1.0);  // both batches stayed in memory
  }
  SUBCASE("a smaller share: the prefetch fills the free room only and evicts nothing") {
    const std::vector<uint64_t> keys = batch_of(0, 30);  // 4 x 30 > 100
    tiered.prefetch(keys);
    m = tiered.memory();
    CHECK(m.tier.memory_rows == 100);
    CHECK(m.tier.disk_rows == 1900);
    CHECK(m.tier.evictions_per_s == 0.0);
    CHECK(tiered.pull(keys) == memory.pull(keys));
    CHECK(tiered.memory().tier.hit_rate == doctest::Approx(10.0 / 30.0));  // the pull read the other 20
  }
  CHECK(rows_of(saved(tiered)) == rows_of(before));
  memory.prefetch(batch_of(0, 10));  // a memory table has nothing to prefetch
  CHECK(saved(memory) == before);
}

TEST_CASE("tiered table: the hit rate counts the keys that have rows; a new key is no miss") {
  const auto dir = scratch_dir("tier-hit-rate");
  SparseTable tiered(ctr_spec((dir / "t").string(), 100), kUnused, 0.01f, 1);
  std::vector<uint64_t> keys(200);
  for (uint64_t i = 0; i < keys.size(); ++i) keys[i] = i * 0x9e3779b97f4a7c15ULL;
  tiered.push(keys, std::vector<float>(keys.size() * 6, 0.5f));  // 90 stay in memory, 110 go to disk
  REQUIRE(tiered.memory().tier.memory_rows == 90);
  std::vector<uint64_t> looked = keys;
  for (uint64_t i = 0; i < 50; ++i) looked.push_back((1000 + i) * 0x9e3779b97f4a7c15ULL);  // never pushed
  tiered.pull(looked);
  CHECK(tiered.memory().tier.hit_rate == doctest::Approx(90.0 / 200.0));
  // With nothing on disk, new keys are not lookups either.
  SparseTable roomy(ctr_spec((dir / "roomy").string(), 1000), kUnused, 0.01f, 1);
  roomy.push(std::vector<uint64_t>(keys.begin(), keys.begin() + 100), std::vector<float>(100 * 6, 0.5f));
  roomy.memory();
  roomy.pull(looked);  // 100 rows in memory, 150 keys without one
  CHECK(roomy.memory().tier.hit_rate == 1.0);
}

TEST_CASE("tiered table: shrink decays and deletes rows on disk as in memory") {
  const auto dir = scratch_dir("tier-shrink");
  SparseTable memory(ctr_spec(), kUnused);
  SparseTable tiered(ctr_spec((dir / "t").string(), 16 * 4), kUnused);
  push_both(memory, tiered, 2000, 30, 2);
  const uint64_t on_disk = tiered.memory().tier.disk_rows;
  REQUIRE(on_disk > 500);
  for (int day = 0; day < 4; ++day) {
    const TableShrink a = memory.shrink(), b = tiered.shrink();
    CHECK(a.rows_before == b.rows_before);
    CHECK(a.rows_after == b.rows_after);
    CHECK(rows_of(saved(tiered)) == rows_of(saved(memory)));
  }
  CHECK(tiered.rows() < 2000);
  const TableMemory m = tiered.memory();
  CHECK(m.tier.memory_rows + m.tier.disk_rows == memory.rows());
  CHECK(m.tier.disk_rows < on_disk / 2);  // deleted from the disk tier, not just moved
}

TEST_CASE("tiered table: saves and loads are equivalent across tiers, base and delta included") {
  const auto dir = scratch_dir("tier-saves");
  SparseTable memory(ctr_spec(), kUnused);
  SparseTable tiered(ctr_spec((dir / "t").string(), 16 * 8), kUnused);
  push_both(memory, tiered, 2000, 20, 4);
  CHECK(rows_of(saved(tiered, SaveMode::kBase)) == rows_of(saved(memory, SaveMode::kBase)));
  push_both(memory, tiered, 2000, 10, 5);
  const std::string delta_memory = saved(memory, SaveMode::kDelta), delta_tiered = saved(tiered, SaveMode::kDelta);
  CHECK(rows_of(delta_tiered) == rows_of(delta_memory));
  CHECK(rows_of(saved(tiered, SaveMode::kDelta)).empty());  // the delta cleared what it wrote, on disk too
  CHECK(rows_of(saved(memory, SaveMode::kDelta)).empty());
  const std::string all = saved(memory);

  // A memory table's save into a tiered table, and back out: the same rows.
  SparseTable loaded(ctr_spec((dir / "loaded").string(), 16 * 4), kUnused);
  {
    std::istringstream in(all);
    loaded.load(in);
  }
  CHECK(loaded.memory().tier.disk_rows > 0);
  CHECK(rows_of(saved(loaded)) == rows_of(all));
  // A tiered save into a memory table.
  SparseTable back(ctr_spec(), kUnused);
  {
    std::istringstream in(saved(tiered));
    back.load(in);
  }
  CHECK(rows_of(saved(back)) == rows_of(all));
  // Upserting a delta over rows on disk replaces them, once each.
  push_both(memory, tiered, 2000, 5, 6);
  const std::string delta = saved(memory, SaveMode::kDelta);
  {
    std::istringstream in(delta);
    loaded.load(in, /*upsert=*/true);
  }
  {
    std::istringstream in(delta);
    back.load(in, /*upsert=*/true);
  }
  CHECK(loaded.rows() == back.rows());
  CHECK(rows_of(saved(loaded)) == rows_of(saved(back)));
}

TEST_CASE("tiered tables: the budget is shared by row size and refused below one batch") {
  TableSpecs specs;
  specs.sparse.push_back(ctr_spec());
  SparseTableSpec wide = ctr_spec();
  wide.name = "wide";
  wide.dim = 1;
  specs.sparse.push_back(wide);
  for (auto& s : specs.sparse) s.storage.kind = StorageSpec::Kind::kSsd;
  specs.ssd_dir = "/tmp/x";
  CHECK_THROWS_WITH_AS(server_storage(specs, 0), doctest::Contains("ps.memory_budget_mb"), paddle::common::ConfigError);
  specs.memory_budget_bytes = 1 << 20;
  specs.batch_keys = 100000;
  CHECK_THROWS_WITH_AS(server_storage(specs, 0),
                       doctest::Contains("ps.memory_budget_mb: 1 MB holds"), paddle::common::ConfigError);
  specs.batch_keys = 1000;
  const std::vector<StorageSpec> storage = server_storage(specs, 1);
  const uint64_t bytes = SparseTable::memory_row_bytes(specs.sparse[0], kUnused) +
                         SparseTable::memory_row_bytes(specs.sparse[1], kUnused);
  CHECK(storage[0].memory_rows == (1u << 20) / bytes);
  CHECK(storage[1].memory_rows == storage[0].memory_rows);
  CHECK(storage[0].dir == "/tmp/x/server-1/embedding");
  CHECK(storage[1].dir == "/tmp/x/server-1/wide");
}

TEST_CASE("tiered table: a full disk is one error naming the tier's directory, and its rows stay in memory") {
  const auto dir = scratch_dir("tier-full");
  const auto mount_point = dir / "small";
  auto disk = small_disk(mount_point);
  if (!disk) return;
  const std::string tier_dir = (mount_point / "t").string();
  SparseTable tiered(ctr_spec(tier_dir, 16), kUnused);
  std::string error;
  uint64_t pushed = 0;
  try {
    for (uint64_t n = 0; n < 1000; ++n) {  // a 1 MiB disk is under the tier's reserve: its first write stops
      std::vector<uint64_t> batch(1000);
      for (uint64_t i = 0; i < batch.size(); ++i) batch[i] = n * 1000 + i;
      tiered.push(batch, std::vector<float>(batch.size() * 6, 1.0f));
      pushed += batch.size();
    }
  } catch (const paddle::common::DataError& e) {
    error = e.what();
  }
  REQUIRE(!error.empty());
  MESSAGE(error);
  CHECK(error.find("sparse table embedding: the disk tier " + tier_dir) != std::string::npos);
  CHECK(error.find("is full") != std::string::npos);
  CHECK(error.find('\n') == std::string::npos);
  CHECK(tiered.rows() >= pushed);  // rows whose write failed are still in memory
}

TEST_CASE("parameter server: a disk tier that fails answers the request with its line, then the server stops") {
  const auto dir = scratch_dir("tier-server-full");
  auto disk = small_disk(dir / "small");
  if (!disk) return;
  TableSpecs specs;
  specs.sparse.push_back(ctr_spec());
  specs.sparse[0].storage.kind = StorageSpec::Kind::kSsd;
  specs.memory_budget_bytes = 4096;
  specs.ssd_dir = (dir / "small").string();
  ServerOptions options;
  options.log = stderr;
  options.sync = false;  // pushes apply at once (the synchronous mode's wait in memory until a barrier)
  ParameterServer server(options, build_server_tables(specs, 0, 1));
  std::promise<std::string> ended;
  std::thread serving([&] {
    try {
      server.run();
      ended.set_value("run() returned");
    } catch (const DiskTierError& e) {
      ended.set_value(e.what());
    }
  });
  std::string pushed_error;
  {
    PsClient client({"127.0.0.1:" + std::to_string(server.port())}, specs, paddle::ps::testing::quick());
    try {
      for (uint64_t n = 0; n < 1000; ++n) {
        std::vector<uint64_t> batch(1000);
        for (uint64_t i = 0; i < batch.size(); ++i) batch[i] = n * 1000 + i;
        client.push_sparse(0, batch, std::vector<float>(batch.size() * 6, 1.0f));
      }
    } catch (const std::exception& e) {
      pushed_error = e.what();
    }
  }
  auto result = ended.get_future();
  const bool stopped = result.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  if (!stopped) server.stop();
  serving.join();
  INFO("the pushes ended with: ", pushed_error);
  REQUIRE(stopped);
  const std::string why = result.get();
  CHECK(why.find("sparse table embedding: the disk tier " + (dir / "small" / "server-0" / "embedding").string() + " is full") == 0);
  CHECK(pushed_error.find(why) != std::string::npos);
}

TEST_CASE("parameter server: a prefetch is answered at once and its rows are in memory for the next pull") {
  const auto dir = scratch_dir("tier-server-prefetch");
  TableSpecs specs;
  specs.sparse.push_back(ctr_spec());
  specs.sparse[0].storage.kind = StorageSpec::Kind::kSsd;
  specs.memory_budget_bytes = 16 * 64 * SparseTable::memory_row_bytes(specs.sparse[0], kUnused);
  specs.ssd_dir = (dir / "ssd").string();
  ServerOptions options;
  options.log = stderr;
  options.sync = false;
  ParameterServer server(options, build_server_tables(specs, 0, 1));
  std::thread serving([&] { server.run(); });
  {
    PsClient client({"127.0.0.1:" + std::to_string(server.port())}, specs, paddle::ps::testing::quick());
    SparseTable reference(ctr_spec(), kUnused);
    std::vector<uint64_t> all(8000);
    for (uint64_t i = 0; i < all.size(); ++i) all[i] = i * 0x9e3779b97f4a7c15ULL;
    for (size_t at = 0; at < all.size(); at += 500) {  // older batches leave for disk as newer ones come
      const std::vector<uint64_t> batch(all.begin() + static_cast<long>(at), all.begin() + static_cast<long>(at + 500));
      const std::vector<float> grads(batch.size() * 6, 0.5f + static_cast<float>(at) / 10000.0f);
      client.push_sparse(0, batch, grads);
      reference.push(batch, grads);
    }
    // The first batch's keys, on disk now; each shard has room for 7 rows (it evicts down to 57 of
    // 64 after every batch), more than these 32 keys bring to any one.
    const std::vector<uint64_t> next(all.begin(), all.begin() + 32);
    client.memory();  // the rates count from here
    client.prefetch_sparse(0, next);
    // The server reads after its answer, before the next request of this connection: this pull
    // finds every row in memory, as the memory table has it.
    CHECK(client.pull_sparse(0, next) == reference.pull(next));
    const std::vector<ServerMemory> report = client.memory();
    REQUIRE(report.size() == 1);
    const TierReport& tier = report[0].tables.back().tier;
    CHECK(tier.tiered);
    CHECK(tier.hit_rate == 1.0);
    CHECK(tier.disk_reads_per_s > 0);
    client.stop_worker();
  }
  serving.join();
}
