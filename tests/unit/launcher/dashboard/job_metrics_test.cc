#include "launcher/dashboard/job_metrics.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

using namespace paddle::launcher;

namespace {

// A node-1 job.json with two trainers and a server, and their last metrics lines.
nlohmann::json job() {
  return nlohmann::json::parse(R"({"node_rank": 1, "restarts": 2, "worker_restarts": 3, "state": "running", "processes": [
      {"role": "trainer", "rank": 2, "state": "running"},
      {"role": "trainer", "rank": 3, "state": "failed"},
      {"role": "server", "rank": 0, "state": "running"}]})");
}

std::vector<nlohmann::json> lines() {
  return {nlohmann::json::parse(R"({"time": 1.5, "step": 120, "epoch": 1, "loss": 0.5, "lr": 0.01,
                                    "samples_per_sec": 2840.5, "comm_seconds_per_step": 0.002})"),
          nullptr,
          nlohmann::json::parse(R"({"time": 2, "step": 9, "tables": [
              {"table": "embedding", "rows": 1000, "value_bytes": 64000, "index_bytes": 16000,
               "tier": {"hit_rate": 0.75, "disk_reads_per_s": 12.5}},
              {"table": "dense", "rows": 1, "value_bytes": 400, "index_bytes": 0}]})")};
}

bool has_line(const std::string& text, const std::string& line) { return text.find("\n" + line + "\n") != std::string::npos; }

}  // namespace

TEST_CASE("every process's last step, labelled job, node, role and rank; a process without a line has none") {
  const std::string text = job_metrics("ctr", job(), lines(), {});
  CHECK(has_line(text, R"(paddle_step{job="ctr",node="1",role="trainer",rank="2"} 120)"));
  CHECK(has_line(text, R"(paddle_samples_per_second{job="ctr",node="1",role="trainer",rank="2"} 2840.5)"));
  CHECK(has_line(text, R"(paddle_loss{job="ctr",node="1",role="trainer",rank="2"} 0.5)"));
  CHECK(has_line(text, R"(paddle_learning_rate{job="ctr",node="1",role="trainer",rank="2"} 0.01)"));
  CHECK(has_line(text, R"(paddle_communication_seconds_per_step{job="ctr",node="1",role="trainer",rank="2"} 0.002)"));
  CHECK(text.find(R"(rank="3"} )") == std::string::npos);  // trainer 3 logged no step: only its state
  CHECK(has_line(text, R"(paddle_step{job="ctr",node="1",role="server",rank="0"} 9)"));
}

TEST_CASE("a process's state is a state set; the generation and restarts come from job.json") {
  const std::string text = job_metrics("ctr", job(), lines(), {});
  CHECK(has_line(text, R"(paddle_process_state{job="ctr",node="1",role="trainer",rank="3",state="failed"} 1)"));
  CHECK(has_line(text, R"(paddle_process_state{job="ctr",node="1",role="trainer",rank="3",state="running"} 0)"));
  CHECK(has_line(text, R"(paddle_job_generation{job="ctr",node="1"} 2)"));
  CHECK(has_line(text, R"(paddle_job_restarts_total{job="ctr",node="1"} 2)"));
  CHECK(has_line(text, R"(paddle_job_worker_restarts_total{job="ctr",node="1"} 3)"));
}

TEST_CASE("a server's tables: rows, bytes, and the tier's hit ratio and disk reads where it has a tier") {
  const std::string text = job_metrics("ctr", job(), lines(), {});
  const std::string server = R"(job="ctr",node="1",role="server",rank="0")";
  CHECK(has_line(text, "paddle_server_table_rows{" + server + R"(,table="embedding"} 1000)"));
  CHECK(has_line(text, "paddle_server_table_rows{" + server + R"(,table="dense"} 1)"));
  CHECK(has_line(text, "paddle_server_table_bytes{" + server + R"(,table="embedding"} 80000)"));
  CHECK(has_line(text, "paddle_server_tier_hit_ratio{" + server + R"(,table="embedding"} 0.75)"));
  CHECK(has_line(text, "paddle_server_tier_disk_reads_per_second{" + server + R"(,table="embedding"} 12.5)"));
  CHECK(text.find(R"(paddle_server_tier_hit_ratio{job="ctr",node="1",role="server",rank="0",table="dense"})") ==
        std::string::npos);
}

TEST_CASE("the launcher's figures; the store's requests only where the store lives") {
  ControlPlaneFigures figures;
  figures.nodes = 4;
  figures.heartbeats_missed = 3;
  std::string text = job_metrics("ctr", job(), lines(), figures);
  CHECK(has_line(text, R"(paddle_launch_nodes{job="ctr",node="1"} 4)"));
  CHECK(has_line(text, R"(paddle_launch_heartbeats_missed_total{job="ctr",node="1"} 3)"));
  CHECK(text.find("paddle_launch_store_requests_total{") == std::string::npos);
  figures.store_requests = 1234;
  text = job_metrics("ctr", nullptr, {}, figures);  // before job.json: the launcher's families only
  CHECK(has_line(text, R"(paddle_launch_store_requests_total{job="ctr",node="0"} 1234)"));
  CHECK(text.find("paddle_step{") == std::string::npos);
}

TEST_CASE("Prometheus' own linter passes the page (where promtool is installed)") {
  if (std::system("command -v promtool > /dev/null 2>&1") != 0) return;  // the Debian package prometheus
  ControlPlaneFigures figures;
  figures.store_requests = 10;
  const auto file = std::filesystem::temp_directory_path() / ("metrics-" + std::to_string(::getpid()) + ".txt");
  std::ofstream(file) << job_metrics("ctr", job(), lines(), figures);
  const int status = std::system(("promtool check metrics < " + file.string() + " > " + file.string() + ".out 2>&1").c_str());
  std::ifstream report(file.string() + ".out");
  const std::string said((std::istreambuf_iterator<char>(report)), std::istreambuf_iterator<char>());
  CHECK_MESSAGE(status == 0, said);
  std::filesystem::remove(file);
  std::filesystem::remove(file.string() + ".out");
}
