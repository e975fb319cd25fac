#include "launcher/supervise/hang_verdict.h"

#include <unistd.h>

#include <cstdio>

#include "launcher/supervise/hang_report.h"

#include <doctest/doctest.h>

#include <fmt/format.h>

namespace paddle::launcher {
namespace {

using common::Phase;

ProcessFinding trainer(int rank, int node, double quiet, char state = 'S') {
  ProcessFinding f;
  f.role = "trainer";
  f.rank = rank;
  f.node = node;
  f.local = rank % 2;
  f.pid = 100 + rank;
  f.state = state;
  f.quiet = quiet;
  return f;
}

ProcessFinding with_page(ProcessFinding f, Phase phase, uint64_t sequence, double seconds_in_phase = 30) {
  f.page = PageFinding{phase, fmt::format("allreduce #{}", sequence), sequence, 4096, seconds_in_phase, 340};
  return f;
}

TEST_CASE("ranks wait in a collective that one rank has not entered: that rank, with its phase") {
  const std::vector<ProcessFinding> job = {
      with_page(trainer(0, 0, 31), Phase::kCollective, 1205), with_page(trainer(1, 0, 31), Phase::kCollective, 1205),
      with_page(trainer(2, 1, 31), Phase::kCollective, 1205), with_page(trainer(3, 1, 33), Phase::kDataLoading, 1204, 612)};
  const JobHangVerdict v = judge_hang(job);
  REQUIRE(v.culprit);
  CHECK(*v.culprit == 3);
  CHECK(v.why == "it has not entered allreduce #1205, in which trainers 0-2 wait; it has been in data loading for 612 s");
  const std::string line = hang_verdict_line(job, v, 30, "log", 2);
  CHECK(line == "the job made no progress for 30 s: trainer 3 (node 1, local 1, pid 103) is the culprit: it has not "
                "entered allreduce #1205, in which trainers 0-2 wait; it has been in data loading for 612 s. The others: "
                "trainers 0-2 wait in allreduce #1205 (4.0 KB), quiet 31 s. Each process's state and stacks: "
                "log/hang.*.txt on its node");
}

TEST_CASE("ranks in different collectives: the one apart went past, or has not reached, the others'") {
  std::vector<ProcessFinding> job = {
      with_page(trainer(0, 0, 10), Phase::kCollective, 7), with_page(trainer(1, 0, 10), Phase::kCollective, 7),
      with_page(trainer(2, 1, 10), Phase::kCollective, 7), with_page(trainer(3, 1, 12), Phase::kCollective, 8)};
  JobHangVerdict v = judge_hang(job);
  REQUIRE(v.culprit);
  CHECK(*v.culprit == 3);
  CHECK(v.why == "it is in allreduce #8: it went past allreduce #7, in which trainers 0-2 wait");
  job[3] = with_page(trainer(3, 1, 12), Phase::kCollective, 6);
  v = judge_hang(job);
  CHECK(v.why == "it is in allreduce #6: it has not reached allreduce #7, in which trainers 0-2 wait");
  // Two ranks, one ahead: it went on without the other.
  const std::vector<ProcessFinding> two = {with_page(trainer(0, 0, 10), Phase::kCollective, 68),
                                           with_page(trainer(1, 0, 10), Phase::kCollective, 69)};
  v = judge_hang(two);
  REQUIRE(v.culprit);
  CHECK(*v.culprit == 1);
  CHECK(v.why == "it is in allreduce #69: it went past allreduce #68, in which trainer 0 waits");
}

TEST_CASE("a stopped process, then one in uninterruptible sleep, is the culprit before any page says otherwise") {
  std::vector<ProcessFinding> job = {with_page(trainer(0, 0, 10), Phase::kCollective, 5),
                                     with_page(trainer(1, 0, 10, 'D'), Phase::kCheckpointSave, 4),
                                     with_page(trainer(2, 0, 8, 'T'), Phase::kCompute, 4)};
  job[1].wait = "io_schedule";
  JobHangVerdict v = judge_hang(job);
  REQUIRE(v.culprit);
  CHECK(*v.culprit == 2);
  CHECK(v.why == "it is stopped (SIGSTOP)");
  job[2].state = 'S';
  v = judge_hang(job);
  CHECK(*v.culprit == 1);
  CHECK(v.why == "it is in uninterruptible sleep (D) in io_schedule");
}

TEST_CASE("a lone quiet worker while the others go on; servers never count") {
  ProcessFinding server = trainer(0, 0, 100);
  server.role = "server";
  server.page = PageFinding{Phase::kServing};
  ProcessFinding stuck = with_page(trainer(0, 0, 20), Phase::kPsPull, 0), going = with_page(trainer(1, 0, 0.5), Phase::kCompute, 0);
  stuck.role = going.role = "worker";
  going.going = true;
  const std::vector<ProcessFinding> job = {server, stuck, going};
  const JobHangVerdict v = judge_hang(job);
  REQUIRE(v.culprit);
  CHECK(*v.culprit == 1);
  CHECK(v.why == "it waits in a pull from the servers while the others go on");
  CHECK(hang_verdict_line(job, v, 20, "log", 1) ==
        "the job made no progress for 20 s: worker 0 (local 0, pid 100) is the culprit: it waits in a pull from the "
        "servers while the others go on. Each process's state and stacks: log/hang.*.txt");
}

TEST_CASE("without pages: who went quiet first by a second or more, else nobody") {
  std::vector<ProcessFinding> job = {trainer(0, 0, 7), trainer(1, 0, 9), trainer(2, 0, 5)};
  JobHangVerdict v = judge_hang(job);
  REQUIRE(v.culprit);
  CHECK(*v.culprit == 1);
  CHECK(v.why == "it went quiet 2 s before the others, which wait for it");
  job[1].quiet = 7.5;
  v = judge_hang(job);
  CHECK_FALSE(v.culprit);
  CHECK(hang_verdict_line(job, v, 5, "log", 1).starts_with(
      "the job made no progress for 5 s: no process stands out: they went quiet together. The others: trainers 0-2 are "
      "sleeping, quiet 8 s"));
}

TEST_CASE("findings cross the network as JSON and come back equal") {
  ProcessFinding f = with_page(trainer(5, 2, 12.5, 'D'), Phase::kCollective, 99);
  f.wait = "futex_wait_queue";
  f.going = true;
  const ProcessFinding back = finding_from_json(nlohmann::json::parse(to_json(f).dump()));
  CHECK(back.who(true) == "trainer 5 (node 2, local 1, pid 105)");
  CHECK(back.state == 'D');
  CHECK(back.wait == "futex_wait_queue");
  CHECK(back.quiet == 12.5);
  CHECK(back.going);
  REQUIRE(back.page);
  CHECK(back.page->phase == Phase::kCollective);
  CHECK(back.page->collective == "allreduce #99");
  CHECK(back.page->sequence == 99);
  CHECK(back.page->bytes == 4096);
}

TEST_CASE("ranks are named in runs") {
  CHECK(name_ranks("trainer", {3}) == "trainer 3");
  CHECK(name_ranks("trainer", {2, 0, 1, 5, 7, 8}) == "trainers 0-2, 5, 7, 8");
  CHECK(name_ranks("worker", {0, 1}) == "workers 0, 1");
}

}  // namespace
}  // namespace paddle::launcher

namespace paddle::launcher {
namespace {

TEST_CASE("programs without a page: the one whose stacks are in no collective is what the others wait for") {
  std::vector<ProcessFinding> job = {trainer(0, 0, 6), trainer(1, 0, 6.4)};
  CHECK_FALSE(judge_hang(job).culprit);  // they went quiet together
  job[0].stack_in_collective = true;
  job[1].stack_in_collective = false;
  job[1].python_frame = "<module> (paddle_ddp.py:19)";
  const JobHangVerdict v = judge_hang(job);
  REQUIRE(v.culprit);
  CHECK(*v.culprit == 1);
  CHECK(v.why == "its stacks are in no collective, while trainer 0's wait in one; its Python frame: <module> "
                 "(paddle_ddp.py:19)");
}

TEST_CASE("a hang file's stacks: a collective in a thread's frames, idle OpenMP workers' barriers aside, and the "
          "innermost Python frame") {
  const std::string path = "/tmp/hang_verdict_test." + std::to_string(::getpid()) + ".txt";
  const auto clues_of = [&](const std::string& text) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
    StackClues clues = read_stack_clues(path);
    std::remove(path.c_str());
    return clues;
  };
  StackClues c = clues_of("trainer 0\n\nlast lines of log:\nallreduce mentioned in the log\n\nnative stacks:\n"
                          "#0  0x1 in clock_nanosleep ()\n#1  0x2 in gomp_team_barrier_wait_end ()\n");
  REQUIRE(c.in_collective);
  CHECK_FALSE(*c.in_collective);  // the log's text and OpenMP's barrier do not count
  c = clues_of("x\n\nnative stacks:\n#0  0x1 in syscall ()\n#5  0x2 in paddle::distributed::ProcessGroupGloo::AllReduce ()\n"
               "\nPython frames:\nThread 7 (idle): \"MainThread\"\n    all_reduce (paddle/distributed/all_reduce.py:97)\n"
               "    <module> (paddle_ddp.py:21)\n");
  REQUIRE(c.in_collective);
  CHECK(*c.in_collective);
  CHECK(c.python_frame == "all_reduce (paddle/distributed/all_reduce.py:97)");
  c = clues_of("x\n\nnative stacks:\nno native stacks: gdb is not on PATH (Debian's package gdb)\n");
  CHECK_FALSE(c.in_collective);  // none taken: nothing known
  // py-spy dump --native, as it shows a Paddle 2.6 rank waiting for its gradients' allreduce and
  // one asleep in its own code: native frames (a library in parentheses) between Python ones.
  c = clues_of("x\n\nnative stacks:\nbetween the Python frames below (py-spy dump --native)\n\nPython frames:\n"
               "Thread 16169 (idle): \"MainThread\"\n    waitRecv (libpaddle.so)\n"
               "    paddle::distributed::ProcessGroupGloo::AllReduce (libpaddle.so)\n"
               "    backward (paddle/base/dygraph/tensor_patch_methods.py:342)\n    <module> (paddle_ddp_stall.py:28)\n");
  REQUIRE(c.in_collective);
  CHECK(*c.in_collective);
  CHECK(c.python_frame == "backward (paddle/base/dygraph/tensor_patch_methods.py:342)");
  c = clues_of("x\n\nnative stacks:\nbetween the Python frames below (py-spy dump --native)\n\nPython frames:\n"
               "Thread 16170 (idle): \"MainThread\"\n    clock_nanosleep (libc.so.6)\n    time_sleep (libpython3.11.so.1.0)\n"
               "    stall (paddle_ddp_stall.py:14)\n    <module> (paddle_ddp_stall.py:26)\n    0x7feedb04524a (libc.so.6)\n");
  REQUIRE(c.in_collective);
  CHECK_FALSE(*c.in_collective);
  CHECK(c.python_frame == "stall (paddle_ddp_stall.py:14)");
}

}  // namespace
}  // namespace paddle::launcher
