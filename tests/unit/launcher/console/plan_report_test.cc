#include <doctest/doctest.h>

#include <cstdio>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "launcher/console/launch_log.h"
#include "launcher/console/log_echo.h"
#include "launcher/console/plan_report.h"
#include "tests/unit/launcher/test_support.h"

using namespace paddle::launcher;
using namespace paddle::launcher::testing;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + std::to_string(::getpid()))).string();
}

}  // namespace

TEST_CASE("the Distributed Envs table is Paddle's pretty_print_envs, byte for byte") {
  std::string long_value(50, 'x');
  long_value.replace(40, 10, "0123456789");
  std::string table = distributed_envs_table({{"PADDLE_TRAINER_ID", "0"}, {"LONG", long_value}});
  auto lines = lines_of(table);
  // As Paddle's "\n{}\n".format(draws): the log line's own newline then leaves a blank line.
  CHECK(table.ends_with("+\n"));
  REQUIRE(lines.size() == 7);
  CHECK(lines[0].empty());
  CHECK(lines[1] == "    +" + std::string(87, '=') + "+");
  CHECK(lines[2] == "    |" + std::string(24, ' ') + "Distributed Envs" + "  " + std::string(20, ' ') + "Value" +
                        std::string(20, ' ') + "|");
  CHECK(lines[3] == "    +" + std::string(87, '-') + "+");
  CHECK(lines[4] == "    |" + std::string(23, ' ') + "PADDLE_TRAINER_ID" + "  " + std::string(22, ' ') + "0" +
                        std::string(22, ' ') + "|");
  CHECK(lines[5] == "    |" + std::string(36, ' ') + "LONG" + "  " + "... " + long_value.substr(9) + "|");
  CHECK(lines[6] == lines[1]);
}

TEST_CASE("the table widens for names longer than 40 characters") {
  std::string name(44, 'N');
  auto lines = lines_of(distributed_envs_table({{name, "v"}}));
  CHECK(lines[1].size() == 4 + 1 + 44 + 47 + 1);
}

TEST_CASE("Configuration Arguments block") {
  auto lines = lines_of(configuration_block(parse({"--nproc_per_node=2", "train"})));
  CHECK(lines.front() == "-----------  Configuration Arguments -----------");
  CHECK(lines.back() == "------------------------------------------------");
  CHECK(std::find(lines.begin(), lines.end(), "nproc_per_node: 2") != lines.end());
}

TEST_CASE("log lines have Paddle's format") {
  std::string line = LaunchLog::format_line("INFO", "hello", std::source_location::current());
  // INFO 2026-11-22 13:50:00,123 plan_report_test.cc:NN] hello
  REQUIRE(line.size() > 30);
  CHECK(line.starts_with("INFO 20"));
  CHECK(line[9] == '-');
  CHECK(line[15] == ' ');
  CHECK(line[24] == ',');
  CHECK(line.find(" plan_report_test.cc:") == 28);
  CHECK(line.ends_with("] hello\n"));
}

TEST_CASE("dry run JSON lists every process with role, rank, command and environment") {
  LaunchPlan plan = plan_for({"--server_num=1", "--worker_num=2", "t"});
  auto doc = nlohmann::json::parse(dry_run_json(plan));
  CHECK(doc["mode"] == "ps");
  REQUIRE(doc["processes"].size() == 3);
  CHECK(doc["processes"][2]["role"] == "worker");
  CHECK(doc["processes"][2]["rank"] == 1);
  CHECK(doc["processes"][2]["command"][0] == "/bin/true");
  CHECK(doc["processes"][2]["env"]["PADDLE_TRAINER_ID"] == "1");
  std::string table = dry_run_table(plan);
  CHECK(table.find("server") != std::string::npos);
  CHECK(table.find("log/workerlog.1") != std::string::npos);
}

TEST_CASE("shell_join quotes what a shell would split") {
  CHECK(shell_join({"a", "b c", "it's"}) == "a 'b c' 'it'\\''s'");
}

TEST_CASE("LogEcho copies whole lines only, and the rest at the end") {
  const std::string log = temp_path("echo-log");
  const std::string out_path = temp_path("echo-out");
  std::FILE* out = std::fopen(out_path.c_str(), "w");
  LogEcho echo(log, out);
  echo.poll();  // no file yet: nothing
  std::ofstream(log) << "first\nsec";
  echo.poll();
  std::ofstream(log, std::ios::app) << "ond\nthi";
  echo.poll();
  std::fflush(out);
  std::stringstream so_far;
  so_far << std::ifstream(out_path).rdbuf();
  CHECK(so_far.str() == "first\nsecond\n");
  echo.finish();
  std::fclose(out);
  std::stringstream all;
  all << std::ifstream(out_path).rdbuf();
  CHECK(all.str() == "first\nsecond\nthi\n");
  std::filesystem::remove(log);
  std::filesystem::remove(out_path);
}

TEST_CASE("last_lines returns the tail of a file") {
  const std::string path = temp_path("tail");
  {
    std::ofstream out(path);
    for (int i = 0; i < 30; ++i) out << "line " << i << "\n";
  }
  auto tail = lines_of(last_lines(path, 20));
  REQUIRE(tail.size() == 20);
  CHECK(tail.front() == "line 10");
  CHECK(tail.back() == "line 29");
  CHECK(lines_of(last_lines(path, 100)).size() == 30);
  std::ofstream(path) << "";
  CHECK(last_lines(path, 20).empty());
  CHECK(last_lines(path + ".missing", 20).empty());
  std::filesystem::remove(path);
}
