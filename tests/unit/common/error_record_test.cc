#include "common/error_record.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/error.h"

using namespace paddle::common;

TEST_CASE("an exception's record: its type, message, nested causes, and whether a peer failed first") {
  std::exception_ptr caught;
  try {
    try {
      throw std::out_of_range("index 9 of 4");
    } catch (...) {
      std::throw_with_nested(PeerError("rank 2 is gone"));
    }
  } catch (...) {
    caught = std::current_exception();
  }
  const ErrorRecord r = record_exception(caught);
  CHECK(r.kind == "exception");
  CHECK(r.type == "paddle::common::PeerError");
  CHECK(r.what == "rank 2 is gone");
  CHECK(r.chain == std::vector<std::string>{"std::out_of_range: index 9 of 4"});
  CHECK(r.peer);
  CHECK(r.pid == ::getpid());
  CHECK(r.headline() == "paddle::common::PeerError: rank 2 is gone\ncaused by: std::out_of_range: index 9 of 4");
}

TEST_CASE("a record round-trips through its JSON, which torch's reader understands too") {
  ErrorRecord r;
  r.kind = "signal";
  r.signal = "SIGSEGV";
  r.frames = {"#0 /bin/train+0x1234", "#1 /bin/train+0x99"};
  r.pid = 42;
  r.timestamp = 1763900000;
  const auto back = ErrorRecord::from_json(r.to_json());
  REQUIRE(back);
  CHECK(back->kind == "signal");
  CHECK(back->signal == "SIGSEGV");
  CHECK(back->frames == r.frames);
  CHECK(back->timestamp == 1763900000);
  CHECK(back->headline() == "died by SIGSEGV");
  const auto torch_view = nlohmann::json::parse(r.to_json());
  CHECK(torch_view["message"]["message"] == "died by SIGSEGV");
  CHECK(torch_view["message"]["extraInfo"]["py_callstack"] == "#0 /bin/train+0x1234\n#1 /bin/train+0x99\n");
}

TEST_CASE("torch's own record reads as a Python failure; anything else is no record") {
  const auto torch = ErrorRecord::from_json(R"({"message": {"message": "ValueError: batch 7",
      "extraInfo": {"py_callstack": "Traceback (most recent call last):\n  File \"t.py\", line 6, in main\nValueError: batch 7\n",
                    "timestamp": "1763900001"}}})");
  REQUIRE(torch);
  CHECK(torch->kind == "python");
  CHECK(torch->type == "ValueError");
  CHECK(torch->what == "batch 7");
  CHECK(torch->frames.size() == 3);
  CHECK(torch->timestamp == 1763900001);
  CHECK_FALSE(ErrorRecord::from_json("{\"message\": "));
  CHECK_FALSE(ErrorRecord::from_json("[1, 2]"));
  CHECK_FALSE(ErrorRecord::from_json("{\"paddle\": {\"frames\": 7}}"));
}

TEST_CASE("the first record wins, and the error file comes from PADDLE_ERROR_FILE before torch's variable") {
  const auto dir = std::filesystem::temp_directory_path() / ("error-record-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "error.trainer.0.json").string();
  std::filesystem::remove(path);
  ErrorRecord first, second;
  first.kind = second.kind = "exception";
  first.what = "the first";
  second.what = "the second";
  write_error_record(path, first);
  write_error_record(path, second);
  CHECK(read_error_record(path)->what == "the first");
  CHECK_FALSE(read_error_record((dir / "none.json").string()));
  CHECK(error_file_path({{"PADDLE_ERROR_FILE", "/a"}, {"TORCHELASTIC_ERROR_FILE", "/b"}}) == "/a");
  CHECK(error_file_path({{"TORCHELASTIC_ERROR_FILE", "/b"}}) == "/b");
  CHECK_FALSE(error_file_path({}));
  std::filesystem::remove_all(dir);
}
