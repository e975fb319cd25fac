#include <doctest/doctest.h>

#include "common/error.h"
#include "launcher/plan/scheduler_env.h"

using namespace paddle::launcher;
using paddle::common::UsageError;

TEST_CASE("Slurm node lists expand natively: ranges, lists, zero padding, several groups") {
  CHECK(expand_slurm_nodelist("node[01-04,07],gpu5") ==
        std::vector<std::string>{"node01", "node02", "node03", "node04", "node07", "gpu5"});
  CHECK(expand_slurm_nodelist("a1") == std::vector<std::string>{"a1"});
  CHECK(expand_slurm_nodelist("r[8-10]x") == std::vector<std::string>{"r8x", "r9x", "r10x"});
  CHECK(expand_slurm_nodelist("127.0.0.[1-2]") == std::vector<std::string>{"127.0.0.1", "127.0.0.2"});
  CHECK(expand_slurm_nodelist("n[098-101]") == std::vector<std::string>{"n098", "n099", "n100", "n101"});
  CHECK_THROWS_WITH_AS(expand_slurm_nodelist("node[1-2"), doctest::Contains("SLURM_JOB_NODELIST: unbalanced '['"), UsageError);
  CHECK_THROWS_WITH_AS(expand_slurm_nodelist("node[4-2]"), doctest::Contains("runs backwards"), UsageError);
  CHECK_THROWS_WITH_AS(expand_slurm_nodelist("node[a-b]"), doctest::Contains("is not a number or a range"), UsageError);
  CHECK_THROWS_WITH_AS(expand_slurm_nodelist("a,,b"), doctest::Contains("empty entry"), UsageError);
  CHECK_THROWS_WITH_AS(expand_slurm_nodelist("n[1-99999999999999999999]"), doctest::Contains("is not a number or a range"),
                       UsageError);
  CHECK_THROWS_WITH_AS(expand_slurm_nodelist("a[0-99990],b[0-99990]"), doctest::Contains("more than 100000 nodes"),
                       UsageError);
}

TEST_CASE("each scheduler's variables are read, and contradictions among them named") {
  auto slurm = detect_scheduler({{"SLURM_JOB_NODELIST", "n[1-3]"}, {"SLURM_NNODES", "3"}, {"SLURM_NODEID", "2"}});
  REQUIRE(slurm);
  CHECK(slurm->source.starts_with("Slurm"));
  CHECK(slurm->nnodes == 3);
  CHECK(slurm->node_rank == 2);
  CHECK(slurm->master_host == "n1");
  CHECK_THROWS_WITH_AS(detect_scheduler({{"SLURM_JOB_NODELIST", "n[1-3]"}, {"SLURM_NNODES", "2"}}),
                       doctest::Contains("SLURM_NNODES=2 disagrees with SLURM_JOB_NODELIST=n[1-3]"), UsageError);
  auto mpi = detect_scheduler({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "4"}});
  REQUIRE(mpi);
  CHECK(mpi->nnodes == 4);
  CHECK(mpi->node_rank == 1);
  CHECK_FALSE(mpi->master_host);
  auto torch = detect_scheduler({{"MASTER_ADDR", "10.0.0.5"}, {"MASTER_PORT", "29500"}, {"PET_NNODES", "2"}, {"PET_NODE_RANK", "1"}});
  REQUIRE(torch);
  CHECK(torch->master_host == "10.0.0.5");
  CHECK(torch->master_port == 29500);
  CHECK(torch->node_rank == 1);
  auto paddle = detect_scheduler({{"PADDLE_TRAINER_ENDPOINTS", "10.0.0.2:6070,10.0.0.2:6071,10.0.0.1:6070"},
                                  {"POD_IP", "10.0.0.1"},
                                  {"PADDLE_TRAINER_ID", "1"}});
  REQUIRE(paddle);
  CHECK(paddle->nodes == std::vector<std::string>{"10.0.0.2", "10.0.0.1"});
  CHECK(paddle->nnodes == 2);
  CHECK(paddle->master_host == "10.0.0.2");
  CHECK_FALSE(detect_scheduler({{"HOME", "/root"}}));
  CHECK_THROWS_WITH_AS(detect_scheduler({{"OMPI_COMM_WORLD_SIZE", "many"}}), doctest::Contains("OMPI_COMM_WORLD_SIZE"),
                       UsageError);
}

TEST_CASE("a multi-node Slurm job's nodes keep their logs apart unless --log_dir is given") {
  const EnvMap three{{"SLURM_JOB_NODELIST", "n[098-100]"}, {"SLURM_NODEID", "1"}, {"SLURMD_NODENAME", "n099"}};
  auto slurm = detect_scheduler(three);
  REQUIRE(slurm);
  CHECK(slurm->shares_console);
  CHECK(node_log_dir(slurm, "log", false) == "log/n099");
  CHECK(node_log_dir(slurm, "log", true) == "log");
  auto one = detect_scheduler({{"SLURM_JOB_NODELIST", "n098"}, {"SLURMD_NODENAME", "n098"}});
  CHECK_FALSE(one->shares_console);
  CHECK(node_log_dir(one, "log", false) == "log");
  CHECK(node_log_dir(std::nullopt, "log", false) == "log");
  CHECK(detect_scheduler({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}})->shares_console);
  EnvMap bad = three;
  bad["SLURMD_NODENAME"] = "../etc";
  CHECK_THROWS_WITH_AS(detect_scheduler(bad), doctest::Contains("SLURMD_NODENAME: '../etc' is not a host name"), UsageError);
}

TEST_CASE("host names resolve to IPv4; addresses pass through") {
  CHECK(resolve_ipv4("10.1.2.3") == "10.1.2.3");
  CHECK(resolve_ipv4("localhost").value_or("").starts_with("127."));
  CHECK_FALSE(resolve_ipv4("no-such-host.invalid"));
}
