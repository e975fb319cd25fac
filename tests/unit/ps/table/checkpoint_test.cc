#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file.h"
#include "ps/table/checkpoint.h"
#include "tests/unit/ps/ps_test_support.h"

using namespace paddle::ps;
using namespace paddle::ps::testing;

TEST_CASE("each server's share round-trips through its own files") {
  const auto dir = scratch_dir("ps-checkpoint");
  std::vector<ServerTables> saved;
  for (int index = 0; index < 2; ++index) {
    saved.push_back(build_server_tables(small_specs(20), index, 2));
    saved.back().dense[0]->set(std::vector<float>(10, 1.5f + static_cast<float>(index)));
    saved.back().sparse[0]->add({static_cast<uint64_t>(index)}, {1, 2, 3});
    save_checkpoint(dir.string(), saved.back(), index, 2);
  }
  CHECK(std::filesystem::exists(dir / "ps-server-0.json"));
  CHECK(std::filesystem::exists(dir / "ps-server-1.bin"));
  for (int index = 0; index < 2; ++index) {
    ServerTables loaded = build_server_tables(small_specs(20), index, 2);
    load_checkpoint(dir.string(), loaded, index, 2);
    CHECK(loaded.dense[0]->pull() == std::vector<float>(10, 1.5f + static_cast<float>(index)));
    CHECK(loaded.sparse[0]->rows() == 1);
    CHECK(loaded.sparse[0]->pull({0, 1}) == saved[index].sparse[0]->pull({0, 1}));
  }
}

TEST_CASE("loading names what does not fit") {
  const auto dir = scratch_dir("ps-checkpoint-mismatch");
  save_checkpoint(dir.string(), small_tables(), 0, 2);
  ServerTables tables = small_tables();
  CHECK_THROWS_WITH_AS(load_checkpoint(dir.string(), tables, 0, 1),
                       doctest::Contains("was saved by 2 servers, this job has 1"), std::runtime_error);
  CHECK_THROWS_WITH_AS(load_checkpoint(dir.string(), tables, 1, 2), doctest::Contains("ps-server-1.json is missing"),
                       std::runtime_error);
  std::filesystem::resize_file(dir / "ps-server-0.bin", 6);
  CHECK_THROWS_WITH_AS(load_checkpoint(dir.string(), tables, 0, 2), doctest::Contains("ps-server-0.bin: "),
                       std::runtime_error);
}

namespace {

void overwrite(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace

TEST_CASE("a truncated or bit-flipped shard is refused by name; a shard without a checksum still loads") {
  const auto dir = scratch_dir("ps-checkpoint-damaged");
  ServerTables saved = small_tables();
  saved.dense[0]->set(std::vector<float>(saved.dense[0]->size(), 0.25f));
  save_checkpoint(dir.string(), saved, 0, 1);
  const auto bin = dir / "ps-server-0.bin";
  const std::string good = paddle::common::read_file(bin).value_or("");
  ServerTables tables = small_tables();
  const std::string named = "checkpoint " + bin.string() + ": ";

  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x08;
  overwrite(bin, flipped);
  CHECK_THROWS_WITH_AS(load_checkpoint(dir.string(), tables, 0, 1), doctest::Contains((named + "checksum mismatch").c_str()),
                       paddle::common::DataError);
  overwrite(bin, good.substr(0, good.size() - 9));
  CHECK_THROWS_WITH_AS(load_checkpoint(dir.string(), tables, 0, 1), doctest::Contains((named + "checksum mismatch").c_str()),
                       paddle::common::DataError);
  overwrite(bin, good.substr(0, 3));
  CHECK_THROWS_WITH_AS(load_checkpoint(dir.string(), tables, 0, 1),
                       doctest::Contains((named + "truncated before its checksum").c_str()), paddle::common::DataError);

  overwrite(bin, good.substr(0, good.size() - 4));  // the format before the checksum
  const auto manifest = dir / "ps-server-0.json";
  const std::string with_format = paddle::common::read_file(manifest).value_or("");
  const size_t at = with_format.find("\"format\"");
  REQUIRE(at != std::string::npos);
  overwrite(manifest, with_format.substr(0, at) + "\"formerly\"" + with_format.substr(at + 8));
  load_checkpoint(dir.string(), tables, 0, 1);
  CHECK(tables.dense[0]->pull() == saved.dense[0]->pull());

  overwrite(manifest, "{\"server_count\": \"one\"}");
  CHECK_THROWS_WITH_AS(load_checkpoint(dir.string(), tables, 0, 1), doctest::Contains("ps-server-0.json"),
                       paddle::common::DataError);
}

namespace {

// One dense table of 4 and a CTR table of dim 4 under adagrad.
TableSpecs ctr_specs() {
  TableSpecs specs;
  specs.dense.push_back({"deep", 4});
  SparseTableSpec ctr{.name = "embedding", .dim = 4, .seed = 3};
  ctr.accessor = SparseTableSpec::Accessor::kCtr;
  specs.sparse.push_back(ctr);
  specs.sparse.push_back({"wide", 1, /*seed=*/4});
  return specs;
}

// Pushes `keys` to both tables with `show` and `click` each, and a dense step.
void train(ServerTables& tables, const std::vector<uint64_t>& keys, float show, float click, float g) {
  std::vector<float> ctr, plain;
  for (size_t i = 0; i < keys.size(); ++i) {
    for (float v : {show, click, g, -g, g * 0.5f, static_cast<float>(i % 5) * 0.01f}) ctr.push_back(v);
    plain.push_back(g);
  }
  tables.sparse[0]->push(keys, ctr);
  tables.sparse[1]->push(keys, plain);
  tables.dense[0]->push(std::vector<float>(4, g));
}

ServerTables loaded(const std::vector<std::filesystem::path>& dirs) {
  ServerTables tables = build_local_tables(ctr_specs());
  for (const auto& dir : dirs) load_checkpoint(dir.string(), tables, 0, 1);
  return tables;
}

}  // namespace

TEST_CASE("save modes: base, then each delta, rebuild the tables an all save holds, row for row") {
  const auto root = scratch_dir("ps-checkpoint-modes");
  ServerTables tables = build_local_tables(ctr_specs());
  std::vector<uint64_t> high, low, first_half, second_half;
  for (uint64_t i = 0; i < 400; ++i) high.push_back(i * 0x9E3779B97F4A7C15ULL);
  high.push_back(0xFFFFFFFF00000001ULL);
  high.push_back(~0ULL - 5);
  for (uint64_t i = 0; i < 50; ++i) low.push_back(1000 + i);
  for (size_t i = 0; i < high.size(); ++i) (i % 2 ? second_half : first_half).push_back(high[i]);

  train(tables, high, 2, 2, 0.5f);  // score 2: in the base
  train(tables, low, 1, 0, 0.1f);   // score 0.1: not in the base
  save_checkpoint((root / "base").string(), tables, 0, 1, SaveMode::kBase);
  train(tables, first_half, 1, 1, 0.2f);  // delta_score 1
  train(tables, low, 3, 0, 0.3f);         // delta_score 0.1 + 0.3: unsaved rows keep theirs
  save_checkpoint((root / "delta1").string(), tables, 0, 1, SaveMode::kDelta);
  train(tables, second_half, 1, 1, -0.2f);
  save_checkpoint((root / "delta2").string(), tables, 0, 1, SaveMode::kDelta);
  save_checkpoint((root / "all").string(), tables, 0, 1, SaveMode::kAll);

  std::ifstream manifest(root / "delta1" / "ps-server-0.json");
  const auto json = nlohmann::json::parse(manifest);
  CHECK(json["mode"] == "delta");
  CHECK(json["sparse"][0]["rows"] == first_half.size() + low.size());
  CHECK(json["sparse"][0]["accessor"] == "ctr");
  CHECK(json["sparse"][1]["rows"] == first_half.size() + low.size());  // plain: every touched row

  ServerTables all = loaded({root / "all"});
  ServerTables base = loaded({root / "base"});
  CHECK(base.sparse[0]->rows() == high.size());
  CHECK(base.sparse[1]->rows() == high.size() + low.size());
  ServerTables rebuilt = loaded({root / "base", root / "delta1", root / "delta2"});
  CHECK(rebuilt.dense[0]->pull() == all.dense[0]->pull());
  CHECK(all.dense[0]->pull() == tables.dense[0]->pull());
  for (size_t t = 0; t < 2; ++t) {
    CHECK(rebuilt.sparse[t]->rows() == all.sparse[t]->rows());
    CHECK(all.sparse[t]->rows() == tables.sparse[t]->rows());
    for (const auto& keys : {high, low})
      for (uint64_t key : keys) {
        const auto row = all.sparse[t]->stored_row(key);
        REQUIRE(row);
        CHECK(rebuilt.sparse[t]->stored_row(key) == row);
        CHECK(tables.sparse[t]->stored_row(key) == row);  // values, statistics and flags
      }
  }
  CHECK(all.sparse[0]->pull({0xFFFFFFFF00000001ULL, ~0ULL - 5}) == tables.sparse[0]->pull({0xFFFFFFFF00000001ULL, ~0ULL - 5}));
  CHECK(all.sparse[0]->pull({0xFFFFFFFF00000001ULL}) != loaded({}).sparse[0]->pull({0xFFFFFFFF00000001ULL}));
}

TEST_CASE("a checkpoint of other rows is refused by name") {
  const auto dir = scratch_dir("ps-checkpoint-accessor");
  save_checkpoint(dir.string(), build_local_tables(ctr_specs()), 0, 1);
  TableSpecs plain = ctr_specs();
  plain.sparse[0].accessor = SparseTableSpec::Accessor::kPlain;
  ServerTables tables = build_local_tables(plain);
  CHECK_THROWS_WITH_AS(load_checkpoint(dir.string(), tables, 0, 1),
                       doctest::Contains("sparse table 0 is a ctr table, the model's plain"), paddle::common::DataError);
}

TEST_CASE("verifying a save reads every server's share and names the first damaged or missing file, loading nothing") {
  const auto dir = scratch_dir("ps-checkpoint-verify");
  for (int index = 0; index < 2; ++index) {
    ServerTables tables = build_server_tables(small_specs(20), index, 2);
    tables.sparse[0]->add({static_cast<uint64_t>(index)}, {1, 2, 3});
    save_checkpoint(dir.string(), tables, index, 2);
  }
  CHECK_NOTHROW(verify_checkpoint(dir.string(), 2));
  CHECK_THROWS_WITH_AS(verify_checkpoint(dir.string(), 3), doctest::Contains("was saved by 2 servers, this job has 3"),
                       paddle::common::DataError);
  const auto bin = dir / "ps-server-1.bin";
  std::string bytes = paddle::common::read_file(bin).value_or("");
  REQUIRE(bytes.size() > 8);
  bytes[bytes.size() / 2] ^= 0x10;
  std::ofstream(bin, std::ios::binary | std::ios::trunc) << bytes;
  const std::string flipped = "checkpoint " + bin.string() + ": checksum mismatch";
  CHECK_THROWS_WITH_AS(verify_checkpoint(dir.string(), 2), doctest::Contains(flipped.c_str()), paddle::common::DataError);
  std::filesystem::remove(dir / "ps-server-0.json");
  const std::string missing = "checkpoint " + (dir / "ps-server-0").string() + ".json is missing";
  CHECK_THROWS_WITH_AS(verify_checkpoint(dir.string(), 2), doctest::Contains(missing.c_str()), paddle::common::DataError);
}
