#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "runtime/train/config/online_passes.h"

using namespace paddle::runtime;
namespace fs = std::filesystem;

namespace {

OnlineConfig two_days_of_three() {
  OnlineConfig online;
  online.days = {"20261101", "20261102"};
  online.passes_per_day = 3;
  online.data_pattern = "data/{day}/part-{pass}";
  return online;
}

}  // namespace

TEST_CASE("online passes: day by day, pass by pass, each with its data and save directories") {
  const auto passes = online_passes(two_days_of_three(), "/m");
  REQUIRE(passes.size() == 6);
  CHECK(passes[0].data == "data/20261101/part-1");
  CHECK(passes[0].delta_dir == "/m/20261101/1");
  CHECK(passes[4].day == "20261102");
  CHECK(passes[4].pass == 2);
  CHECK(passes[4].index == 4);
  CHECK(passes[5].last_of_day);
  CHECK_FALSE(passes[4].last_of_day);
  CHECK(passes[5].base_dir == "/m/20261102/base");
}

TEST_CASE("online resume: the first pass not saved, and the last base with the deltas after it") {
  const auto passes = online_passes(two_days_of_three(), "/m");
  std::vector<OnlineSave> saves;
  CHECK(first_unsaved_pass(passes, saves) == 0);
  CHECK(saves_to_load(passes, saves, 0).empty());
  for (int p = 1; p <= 3; ++p) saves.push_back({"20261101", p, paddle::ps::SaveMode::kDelta, "/m/20261101/" + std::to_string(p)});
  // The day's last delta is saved but not its base: that pass runs again (shrink and base follow it).
  CHECK(first_unsaved_pass(passes, saves) == 2);
  const auto without_base = saves_to_load(passes, saves, 2);
  REQUIRE(without_base.size() == 2);
  CHECK(without_base[1].pass == 2);
  saves.push_back({"20261101", 0, paddle::ps::SaveMode::kBase, "/m/20261101/base"});
  saves.push_back({"20261102", 1, paddle::ps::SaveMode::kDelta, "/m/20261102/1"});
  CHECK(first_unsaved_pass(passes, saves) == 4);
  const auto load = saves_to_load(passes, saves, 4);
  REQUIRE(load.size() == 2);
  CHECK(load[0].mode == paddle::ps::SaveMode::kBase);
  CHECK(load[1].dir == "/m/20261102/1");
}

TEST_CASE("online donefile: written whole, read back, a bad line named by file:line") {
  const fs::path dir = fs::temp_directory_path() / ("online_saves_" + std::to_string(getpid()));
  fs::remove_all(dir);
  CHECK(read_online_saves(dir.string()).empty());
  const std::vector<OnlineSave> saves = {{"d1", 1, paddle::ps::SaveMode::kDelta, "/m/d1/1"}, {"d1", 0, paddle::ps::SaveMode::kBase, "/m/d1/base"}};
  write_online_saves(dir.string(), saves);
  const auto back = read_online_saves(dir.string());
  REQUIRE(back.size() == 2);
  CHECK(back[1].mode == paddle::ps::SaveMode::kBase);
  CHECK(back[1].dir == "/m/d1/base");
  std::ofstream(dir / "donefile.txt", std::ios::app) << "d2 x delta\n";
  CHECK_THROWS_WITH_AS(read_online_saves(dir.string()), doctest::Contains("donefile.txt:3: 'd2 x delta'"),
                       paddle::common::DataError);
  fs::remove_all(dir);
}

TEST_CASE("online pass data: a file is ready once it exists, a directory once it holds _SUCCESS") {
  const fs::path dir = fs::temp_directory_path() / ("online_ready_" + std::to_string(getpid()));
  fs::remove_all(dir);
  CHECK_FALSE(pass_data_ready((dir / "part").string()));
  fs::create_directories(dir / "pass");
  std::ofstream(dir / "part") << "x\n";
  std::ofstream(dir / "pass" / "part-0") << "x\n";
  CHECK(pass_data_ready((dir / "part").string()));
  CHECK_FALSE(pass_data_ready((dir / "pass").string()));  // still being written
  std::ofstream(dir / "pass" / "_SUCCESS").flush();
  CHECK(pass_data_ready((dir / "pass").string()));
  fs::remove_all(dir);
}
