#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/error_record.h"
#include "launcher/supervise/root_cause.h"

using namespace paddle::launcher;

namespace {

std::string written(const paddle::common::ErrorRecord& record, const std::string& name) {
  const auto path = std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "-" + name);
  std::ofstream(path) << record.to_json();
  return path.string();
}

}  // namespace

TEST_CASE("a process's error record leads with its exception and chain, then the first frame past the runtime") {
  paddle::common::ErrorRecord record;
  record.kind = "exception";
  record.type = "std::runtime_error";
  record.what = "boom";
  record.chain = {"paddle::common::DataError: data/x.csv:3: not a number"};
  record.frames = {"#0 /lib/x86_64-linux-gnu/libstdc++.so.6+0x1234", "#1 not-a-module-frame", "#2 another"};
  const std::string file = written(record, "root_cause_test_exception.json");
  const auto cause = RootCause::read(file);
  REQUIRE(cause);
  CHECK(cause->file == file);
  CHECK(cause->describe() == "std::runtime_error: boom\ncaused by: paddle::common::DataError: data/x.csv:3: not a number\n"
                             "at #1 not-a-module-frame\n   #2 another");
  CHECK(cause->describe(1) == "std::runtime_error: boom\ncaused by: paddle::common::DataError: data/x.csv:3: not a number\n"
                              "at #1 not-a-module-frame");
  std::filesystem::remove(file);
}

TEST_CASE("a signal's record says how the process died; no record, no root cause") {
  paddle::common::ErrorRecord record;
  record.kind = "signal";
  record.signal = "SIGSEGV";
  const std::string file = written(record, "root_cause_test_signal.json");
  const auto cause = RootCause::read(file);
  REQUIRE(cause);
  CHECK(cause->describe() == "died by SIGSEGV");
  std::filesystem::remove(file);
  CHECK_FALSE(RootCause::read(file));
}

TEST_CASE("frames that are not MODULE+0xOFFSET stay as they are") {
  const std::vector<std::string> frames = {"#0 main at train_main.cc:42", "  File \"train.py\", line 3, in <module>"};
  CHECK(name_frames(frames) == frames);
}
