#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "runtime/train/run/generations.h"

using namespace paddle::runtime;

namespace {

std::string scratch_dir(const char* name) {
  const auto dir = std::filesystem::temp_directory_path() / (std::string("generations_test_") + name);
  std::filesystem::remove_all(dir);
  return dir.string();
}

std::vector<Generation> on_disk(const std::string& dir) {
  return read_generations(std::filesystem::path(dir) / "generations.json");
}

}  // namespace

TEST_CASE("a fresh run starts a history of one entry, whatever the directory held") {
  const std::string dir = scratch_dir("fresh");
  CHECK(on_disk(dir).empty());
  const Generation first{0, 3, {0, 0}};
  CHECK(record_generation(dir, first, false) == std::vector<Generation>{first});
  CHECK(on_disk(dir) == std::vector<Generation>{first});
  // A second fresh run in the same directory does not continue the first one's history.
  const Generation again{0, 2, {0, 0}};
  CHECK(record_generation(dir, again, false) == std::vector<Generation>{again});
  CHECK(on_disk(dir) == std::vector<Generation>{again});
}

TEST_CASE("a resuming run appends itself, oldest first, even at another world size") {
  const std::string dir = scratch_dir("append");
  const Generation g0{0, 3, {0, 0}}, g1{1, 2, {3, 18}}, g2{2, 3, {5, 38}};
  record_generation(dir, g0, false);
  CHECK(record_generation(dir, g1, true) == std::vector<Generation>{g0, g1});
  CHECK(record_generation(dir, g2, true) == std::vector<Generation>{g0, g1, g2});
  CHECK(on_disk(dir) == std::vector<Generation>{g0, g1, g2});
  const nlohmann::json json = generations_to_json(on_disk(dir));
  CHECK(json.size() == 3);
  CHECK(json[1] == nlohmann::json{{"generation", 1}, {"world_size", 2}, {"from_epoch", 3}, {"from_step", 18}});
  CHECK(describe_generations({g0, g1}) ==
        "3 worker(s) from epoch 0 (step 0, generation 0), then 2 worker(s) from epoch 3 (step 18, generation 1)");
}

TEST_CASE("a resumed history keeps a generation lost before its checkpoint and drops what ran ahead") {
  const std::string dir = scratch_dir("resumed");
  const Generation g0{0, 2, {0, 0}}, g1{1, 2, {0, 0}};
  record_generation(dir, g0, false);
  // Generation 0 ended before its first checkpoint: generation 1 starts at 0 again, and both count.
  CHECK(record_generation(dir, g1, true) == std::vector<Generation>{g0, g1});
  const Generation g2{2, 3, {4, 40}};
  record_generation(dir, g2, true);
  // A later resume from an older checkpoint (epoch 2) forgets the generation that started after it.
  const Generation g3{0, 2, {2, 20}};
  CHECK(record_generation(dir, g3, true) == std::vector<Generation>{g0, g1, g3});
  // With no history yet (an older output directory), a resumed run starts one.
  const std::string empty = scratch_dir("resumed_empty");
  CHECK(record_generation(empty, g2, true) == std::vector<Generation>{g2});
}

TEST_CASE("the generation is PADDLE_RESTART_COUNT, and a restart always resumes") {
  CHECK(run_origin({}, false).generation == 0);
  CHECK_FALSE(run_origin({}, false).resuming);
  CHECK(run_origin({}, true).resuming);
  const RunOrigin restarted = run_origin({{"PADDLE_RESTART_COUNT", "2"}}, false);
  CHECK(restarted.generation == 2);
  CHECK(restarted.resuming);
  CHECK_THROWS_AS(run_origin({{"PADDLE_RESTART_COUNT", "two"}}, false), paddle::common::ConfigError);
}

TEST_CASE("a malformed history is named, with what to do") {
  const std::string dir = scratch_dir("malformed");
  std::filesystem::create_directories(dir);
  std::ofstream(std::filesystem::path(dir) / "generations.json") << "{\"generation\": 0}";
  CHECK_THROWS_WITH_AS(record_generation(dir, {0, 2, {1, 10}}, true),
                       doctest::Contains("generations.json: not a list of generations"), paddle::common::DataError);
  // A fresh run does not read it, and replaces it.
  CHECK(record_generation(dir, {0, 2, {0, 0}}, false).size() == 1);
  CHECK(on_disk(dir).size() == 1);
}

TEST_CASE("an online run's generations, whose steps start at 0 each time, are ordered by the passes they start at") {
  const std::string dir = scratch_dir("online");
  const Generation first{0, 2, {0, 0}}, at_pass_4{1, 2, {4, 0}};
  record_generation(dir, first, false);
  record_generation(dir, at_pass_4, true);
  // The saves after pass 2 were removed: the run resumes at pass 2 and forgets the one at pass 4.
  const Generation at_pass_2{2, 2, {2, 0}};
  CHECK(record_generation(dir, at_pass_2, true) == std::vector<Generation>{first, at_pass_2});
}
