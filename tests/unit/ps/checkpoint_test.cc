#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "common/error.h"
#include "ps/checkpoint.h"
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

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

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
  const std::string good = slurp(bin);
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
  const std::string with_format = slurp(manifest);
  const size_t at = with_format.find("\"format\"");
  REQUIRE(at != std::string::npos);
  overwrite(manifest, with_format.substr(0, at) + "\"formerly\"" + with_format.substr(at + 8));
  load_checkpoint(dir.string(), tables, 0, 1);
  CHECK(tables.dense[0]->pull() == saved.dense[0]->pull());

  overwrite(manifest, "{\"server_count\": \"one\"}");
  CHECK_THROWS_WITH_AS(load_checkpoint(dir.string(), tables, 0, 1), doctest::Contains("ps-server-0.json"),
                       paddle::common::DataError);
}
