#include "launcher/console/console_echo.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "common/error.h"
#include "launcher/console/echo_selection.h"
#include "launcher/console/log_follower.h"

using namespace paddle::launcher;
using namespace std::chrono_literals;

namespace {

std::filesystem::path scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void append(const std::filesystem::path& file, const std::string& text) {
  std::ofstream(file, std::ios::app) << text;
}

// Two trainers and a server on node 1 of 2, logging into `dir`.
LaunchPlan plan_in(const std::filesystem::path& dir, int node_count = 1) {
  LaunchPlan plan;
  plan.node_count = node_count;
  plan.node_rank = node_count > 1 ? 1 : 0;
  plan.mode = LaunchPlan::Mode::kPs;
  const auto process = [&](Role role, int rank, int local, const char* log) {
    ProcessSpec p;
    p.role = role;
    p.rank = rank;
    p.local_index = local;
    p.log_file = (dir / log).string();
    return p;
  };
  plan.processes = {process(Role::kServer, 0, 0, "serverlog.0"), process(Role::kWorker, 2, 0, "workerlog.0"),
                    process(Role::kWorker, 3, 1, "workerlog.1")};
  return plan;
}

// `count` lines "TEXT, number I".
std::string numbered_lines(int count, const std::string& text) {
  std::string lines;
  for (int i = 0; i < count; ++i) lines += text + ", number " + std::to_string(i) + "\n";
  return lines;
}

std::string read_all(int fd) {
  std::string out;
  char buffer[65536];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<size_t>(n));
  return out;
}

}  // namespace

TEST_CASE("--log_output picks processes by rank and server index, and names itself when wrong") {
  const auto dir = scratch("echo-pick");
  const LaunchPlan plan = plan_in(dir);
  const auto pick = [&](std::optional<std::string> flag) {
    std::vector<std::string> logs;
    for (const ProcessSpec* p : EchoSelection::parse(flag, "auto").pick(plan))
      logs.push_back(std::filesystem::path(p->log_file).filename());
    return logs;
  };
  CHECK(pick(std::nullopt) == std::vector<std::string>{"workerlog.0"});  // the first local worker
  CHECK(pick("all") == std::vector<std::string>{"serverlog.0", "workerlog.0", "workerlog.1"});
  CHECK(pick("3,server0") == std::vector<std::string>{"serverlog.0", "workerlog.1"});
  CHECK(pick("0").empty());  // rank 0 runs on another node
  CHECK_THROWS_WITH_AS(EchoSelection::parse("1,x", "auto"),
                       "--log_output=1,x: 'x' is not a rank, serverN, heterN or all (for example --log_output=0,3,server0)",
                       paddle::common::UsageError);
  CHECK_THROWS_WITH_AS(EchoSelection::parse("1,", "auto"), doctest::Contains("--log_output"),
                       paddle::common::UsageError);
  CHECK_THROWS_WITH_AS(EchoSelection::parse("server-1", "auto"), doctest::Contains("'server-1'"),
                       paddle::common::UsageError);
  CHECK_THROWS_WITH_AS(EchoSelection::parse(std::nullopt, "yes"), doctest::Contains("--log_output_prefix=yes"),
                       paddle::common::UsageError);
}

TEST_CASE("a ps-heter job's heter workers are picked as heterN, never by a worker's rank") {
  const auto dir = scratch("echo-heter");
  LaunchPlan plan = plan_in(dir);
  ProcessSpec heter;
  heter.role = Role::kHeterWorker;
  heter.rank = 0;
  heter.log_file = (dir / "heterlog.0").string();
  plan.processes.push_back(heter);
  plan.processes[1].rank = 0;  // worker 0 here, beside heter worker 0
  const auto pick = [&](const std::string& flag) {
    std::vector<std::string> logs;
    for (const ProcessSpec* p : EchoSelection::parse(flag, "auto").pick(plan))
      logs.push_back(std::filesystem::path(p->log_file).filename());
    return logs;
  };
  CHECK(pick("0") == std::vector<std::string>{"workerlog.0"});
  CHECK(pick("heter0") == std::vector<std::string>{"heterlog.0"});
  CHECK(pick("0,heter0") == std::vector<std::string>{"workerlog.0", "heterlog.0"});
}

TEST_CASE("labels name the process, and the node in a multi-node job; auto labels only several") {
  const auto dir = scratch("echo-label");
  const LaunchPlan one = plan_in(dir), two = plan_in(dir, 2);
  const auto all = EchoSelection::parse("all", "auto");
  CHECK(all.label(one, one.processes[0], 3) == "[server 0] ");
  CHECK(all.label(one, one.processes[2], 3) == "[worker 3] ");
  CHECK(all.label(two, two.processes[1], 3) == "[node 1 worker 2] ");
  CHECK(all.label(one, one.processes[1], 1).empty());
  EchoSelection merged = EchoSelection::parse(std::nullopt, "auto");
  merged.shared_console = true;  // srun or mpirun: one process shown per node, every node in one stream
  CHECK(merged.label(two, two.processes[1], 1) == "[node 1 worker 2] ");
  EchoSelection unlabelled = EchoSelection::parse(std::nullopt, "false");
  unlabelled.shared_console = true;
  CHECK(unlabelled.label(two, two.processes[1], 1).empty());
  CHECK(EchoSelection::parse("2", "true").label(one, one.processes[1], 1) == "[worker 2] ");
  CHECK(EchoSelection::parse("all", "false").label(one, one.processes[1], 3).empty());
}

TEST_CASE("a follower gives whole lines only, and skips ahead counting what it skipped when far behind") {
  const auto dir = scratch("echo-follow");
  const auto log = dir / "workerlog.0";
  LogFollower follower(log.string(), /*max_lag=*/1000);
  CHECK(follower.read_lines().empty());  // no file yet
  append(log, "one\ntw");
  CHECK(follower.read_lines() == "one\n");
  append(log, "o\nthree");
  CHECK(follower.read_lines() == "two\n");
  std::string many;
  for (int i = 0; i < 200; ++i) many += "line " + std::to_string(i) + "\n";  // ~1.8 KB, over max_lag
  append(log, "\n" + many);
  const std::string got = follower.read_lines();
  CHECK(follower.skipped_lines() > 0);
  CHECK(got.size() <= 1000);
  CHECK(got.ends_with("line 199\n"));
  CHECK(got.starts_with("line "));  // resumed at a line's start
  // Every line is accounted for: shown or skipped ("three" and the 200).
  CHECK(follower.skipped_lines() + static_cast<uint64_t>(std::count(got.begin(), got.end(), '\n')) == 201);
  append(log, "last, unfinished");
  CHECK(follower.read_lines(/*final=*/true) == "last, unfinished\n");
}

TEST_CASE("the echo labels every line of every chosen log and ends with what is left") {
  const auto dir = scratch("echo-run");
  const LaunchPlan plan = plan_in(dir);
  append(dir / "serverlog.0", "serving\n");
  append(dir / "workerlog.0", "step 1\nstep 2\n");
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  ConsoleEchoOptions options;
  options.fd = pipe_fds[1];
  options.interval = 10ms;
  ConsoleEcho echo(plan, EchoSelection::parse("all", "auto"), options);
  append(dir / "workerlog.1", "done, no newline");
  CHECK(echo.finish() == 0);
  ::close(pipe_fds[1]);
  const std::string out = read_all(pipe_fds[0]);
  ::close(pipe_fds[0]);
  CHECK(out.find("[server 0] serving\n") != std::string::npos);
  CHECK(out.find("[worker 2] step 1\n[worker 2] step 2\n") != std::string::npos);
  CHECK(out.find("[worker 3] done, no newline\n") != std::string::npos);
}

TEST_CASE("a console nobody reads loses lines, counted, instead of stalling the echo") {
  const auto dir = scratch("echo-stuck");
  const LaunchPlan plan = plan_in(dir);
  const std::string lines = numbered_lines(20000, "a line of a busy worker");
  append(dir / "workerlog.0", lines);  // ~700 KB, ten times what a pipe holds
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  ConsoleEchoOptions options;
  options.fd = pipe_fds[1];
  options.interval = 10ms;
  options.write_timeout = 200ms;
  const auto start = std::chrono::steady_clock::now();
  ConsoleEcho echo(plan, EchoSelection::parse("2", "auto"), options);
  const uint64_t lost = echo.finish();
  CHECK(std::chrono::steady_clock::now() - start < 3s);
  CHECK(lost > 0);
  ::close(pipe_fds[1]);
  const std::string out = read_all(pipe_fds[0]);
  ::close(pipe_fds[0]);
  // What did arrive is whole lines, and with the lost ones makes every line.
  CHECK(out.ends_with("\n"));
  CHECK(static_cast<uint64_t>(std::count(out.begin(), out.end(), '\n')) + lost == 20000);
}

TEST_CASE("finish waits one write timeout in all for a console nobody reads, however many logs are behind") {
  // srun's pipe to a client that reads nothing until the job ends: the launcher's exit must not
  // wait a write timeout per log, per line begun and for the note of lost lines.
  const auto dir = scratch("echo-finish");
  const LaunchPlan plan = plan_in(dir);
  const std::string lines = numbered_lines(5000, "a line of a busy process");
  for (const char* log : {"serverlog.0", "workerlog.0", "workerlog.1"}) append(dir / log, lines);
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  ConsoleEchoOptions options;
  options.fd = pipe_fds[1];
  options.interval = 10ms;
  options.write_timeout = 500ms;
  ConsoleEcho echo(plan, EchoSelection::parse("all", "auto"), options);
  std::this_thread::sleep_for(200ms);  // the pipe is full and the echo waits in a write
  append(dir / "workerlog.1", lines);
  const auto start = std::chrono::steady_clock::now();
  const uint64_t lost = echo.finish();
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(took < options.write_timeout + 700ms);  // before: 3 logs and the note, 2 s and more
  CHECK(lost > 0);
  ::close(pipe_fds[1]);
  const std::string out = read_all(pipe_fds[0]);
  ::close(pipe_fds[0]);
  CHECK(static_cast<uint64_t>(std::count(out.begin(), out.end(), '\n')) + lost == 4 * 5000);
}

TEST_CASE("labels are coloured on a terminal only, and never with NO_COLOR set") {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  CHECK_FALSE(console_wants_colour(pipe_fds[1], std::nullopt));
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  const int terminal = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (terminal < 0) return;  // no pseudo-terminals here
  REQUIRE(::grantpt(terminal) == 0);
  REQUIRE(::unlockpt(terminal) == 0);
  const int side = ::open(::ptsname(terminal), O_RDWR | O_NOCTTY);
  REQUIRE(side >= 0);
  CHECK(console_wants_colour(side, std::nullopt));
  CHECK(console_wants_colour(side, std::string()));  // set but empty: no-color.org says colour
  CHECK_FALSE(console_wants_colour(side, std::string("1")));
  ::close(side);
  ::close(terminal);
}
