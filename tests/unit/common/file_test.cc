#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "common/file.h"

using namespace paddle::common;
namespace fs = std::filesystem;

TEST_CASE("a result file is replaced whole, its directories made, no temporary left") {
  const fs::path dir = fs::temp_directory_path() / ("atomic-" + std::to_string(::getpid()));
  const fs::path file = dir / "out" / "metrics.json";
  write_file_atomically(file, "{\"a\": 1}\n");
  CHECK(read_file(file).value_or("") == "{\"a\": 1}\n");
  write_file_atomically(file, "2");
  CHECK(read_file(file).value_or("") == "2");
  CHECK_FALSE(fs::exists(file.string() + ".tmp"));
  fs::remove_all(dir);
}

TEST_CASE("a write that cannot happen names the path and the reason") {
  const fs::path dir = fs::temp_directory_path() / ("atomic-ro-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "file") << "x";
  // A regular file where a directory should be: fails for root too.
  const std::string blocked = (dir / "file").string();
  CHECK_THROWS_WITH_AS(write_file_atomically(dir / "file" / "metrics.json", "x"),
                       doctest::Contains(blocked.c_str()), DataError);
  fs::remove_all(dir);
}

TEST_CASE("a failed replace names the target and removes its temporary; a stale temporary is overwritten") {
  const fs::path dir = fs::temp_directory_path() / ("atomic-fail-" + std::to_string(::getpid()));
  fs::create_directories(dir / "latest" / "inside");
  const std::string named = (dir / "latest").string() + ": cannot replace: ";
  CHECK_THROWS_WITH_AS(write_file_atomically(dir / "latest", "x"), doctest::Contains(named.c_str()), DataError);
  CHECK_FALSE(fs::exists(dir / "latest.tmp"));
  std::ofstream(dir / "metrics.json.tmp") << "half of a killed writer's file";
  write_file_atomically(dir / "metrics.json", "{}");
  CHECK(read_file(dir / "metrics.json").value_or("") == "{}");
  CHECK_FALSE(fs::exists(dir / "metrics.json.tmp"));
  fs::remove_all(dir);
}
