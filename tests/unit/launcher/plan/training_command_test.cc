#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "launcher/plan/training_command.h"

using namespace paddle::launcher;
namespace fs = std::filesystem;

TEST_CASE("training scripts: paths, PATH lookup, .py files, and clear errors") {
  const fs::path dir = fs::temp_directory_path() / ("cmd-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path script = dir / "train.py";
  std::ofstream(script) << "print('hi')\n";
  const fs::path not_exec = dir / "data.txt";
  std::ofstream(not_exec) << "x\n";
  EnvMap env{{"PATH", "/usr/bin:/bin"}};

  auto sh = resolve_training_command("sh", {"-c", "true"}, env);
  CHECK(sh.front().ends_with("/sh"));
  CHECK(sh[1] == "-c");
  auto py = resolve_training_command(script.string(), {"--epochs=1"}, env);
  CHECK(py[1] == "-u");
  CHECK(py[2] == script.string());
  CHECK(py[3] == "--epochs=1");
  CHECK(fs::path(py[0]).filename().string().starts_with("python"));

  CHECK_THROWS_WITH_AS(resolve_training_command("no-such-program-xyz", {}, env),
                       doctest::Contains("'no-such-program-xyz': not found"), paddle::common::UsageError);
  CHECK_THROWS_WITH_AS(resolve_training_command((dir / "missing.py").string(), {}, env), doctest::Contains("no such file"),
                       paddle::common::UsageError);
  CHECK_THROWS_WITH_AS(resolve_training_command(not_exec.string(), {}, env), doctest::Contains("not an executable"),
                       paddle::common::UsageError);
  CHECK_THROWS_WITH_AS(resolve_training_command(script.string(), {}, {{"PATH", "/nonexistent"}}),
                       doctest::Contains("interpreter"), paddle::common::UsageError);
  fs::remove_all(dir);
}
