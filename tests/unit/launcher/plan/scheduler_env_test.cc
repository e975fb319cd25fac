#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

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


TEST_CASE("Kubeflow Trainer v2's PET_MASTER_ADDR and PET_NPROC_PER_NODE; an elastic PET_NNODES is named") {
  EnvMap env = {{"PET_MASTER_ADDR", "tj-node-0-0.tj"}, {"PET_MASTER_PORT", "29500"}, {"PET_NNODES", "3"},
                {"PET_NODE_RANK", "2"}, {"PET_NPROC_PER_NODE", "4"}};
  const auto v = detect_scheduler(env);
  REQUIRE(v);
  CHECK(v->source == "Kubernetes PyTorchJob (PET_MASTER_ADDR, PET_MASTER_PORT, PET_NNODES, PET_NODE_RANK)");
  CHECK(*v->master_host == "tj-node-0-0.tj");
  CHECK(*v->master_port == 29500);
  CHECK(*v->nnodes == 3);
  CHECK(*v->node_rank == 2);
  CHECK(*v->nproc_per_node == 4);
  env["PET_NPROC_PER_NODE"] = "auto";
  CHECK_FALSE(detect_scheduler(env)->nproc_per_node);
  env["PET_NNODES"] = "1:4";
  CHECK_THROWS_WITH_AS(detect_scheduler(env), doctest::Contains("PET_NNODES=1:4: an elastic PyTorchJob"), UsageError);
}

TEST_CASE("Volcano: the svc plugin's host lists in task order, this node by VC_TASK_INDEX or by HOSTNAME") {
  EnvMap one = {{"VC_TASK_INDEX", "1"}, {"VC_WORKER_HOSTS", "vj-worker-0.vj,vj-worker-1.vj"}, {"VC_WORKER_NUM", "2"}};
  const auto v = detect_scheduler(one, "/nonexistent");
  REQUIRE(v);
  CHECK(v->source == "Volcano (VC_WORKER_HOSTS, VC_TASK_INDEX)");
  CHECK(v->nodes == std::vector<std::string>{"vj-worker-0.vj", "vj-worker-1.vj"});
  CHECK(*v->node_rank == 1);
  CHECK(*v->master_host == "vj-worker-0.vj");
  EnvMap two = {{"VK_TASK_INDEX", "0"}, {"VC_WORKER_HOSTS", "vj-worker-0.vj,vj-worker-1.vj"},
                {"VC_MASTER_HOSTS", "vj-master-0.vj"}, {"HOSTNAME", "vj-worker-0"}};
  const auto w = detect_scheduler(two, "/nonexistent");
  CHECK(w->nodes == std::vector<std::string>{"vj-master-0.vj", "vj-worker-0.vj", "vj-worker-1.vj"});
  CHECK(*w->node_rank == 1);
  one["VC_TASK_INDEX"] = "2";
  CHECK_THROWS_WITH_AS(detect_scheduler(one, "/nonexistent"), doctest::Contains("VC_TASK_INDEX=2 is past the 2 host(s)"),
                       UsageError);
}

TEST_CASE("Volcano without injected variables: /etc/volcano/<task>.host") {
  const auto dir = std::filesystem::temp_directory_path() / "volcano_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "worker.host") << "vj-worker-0.vj\nvj-worker-1.vj";
  std::ofstream(dir / "VC_WORKER_NUM") << "2";
  const auto v = detect_scheduler({{"VC_TASK_INDEX", "0"}}, dir.string());
  REQUIRE(v);
  CHECK(v->nodes == std::vector<std::string>{"vj-worker-0.vj", "vj-worker-1.vj"});
  CHECK(*v->node_rank == 0);
  CHECK_FALSE(detect_scheduler({{"VC_TASK_INDEX", "0"}}, "/nonexistent"));
  std::filesystem::remove_all(dir);
}
