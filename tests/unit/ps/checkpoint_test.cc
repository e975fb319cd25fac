#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

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
