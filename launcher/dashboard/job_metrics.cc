#include "launcher/dashboard/job_metrics.h"

#include <functional>

#include "launcher/dashboard/prometheus_text.h"

namespace paddle::launcher {
namespace {

using Type = PrometheusText::Type;

constexpr const char* kStates[] = {"starting", "running", "restarting", "succeeded", "failed", "stopped"};

double number(const nlohmann::json& value) { return value.is_number() ? value.get<double>() : 0.0; }

struct Process {
  MetricLabels labels;
  const nlohmann::json* info;  // job.json's entry
  const nlohmann::json* line;  // its last metrics line, or null json
};

}  // namespace

std::string job_metrics(const std::string& job_id, const nlohmann::json& job, const std::vector<nlohmann::json>& last_lines,
                        const ControlPlaneFigures& launcher,
                        const std::vector<std::optional<common::ProgressReading>>& pages, int64_t now_ns) {
  const std::string node = job.is_object() ? std::to_string(job.value("node_rank", 0)) : "0";
  const MetricLabels node_labels{{"job", job_id}, {"node", node}};
  std::vector<Process> processes;
  if (job.is_object() && job.contains("processes"))
    for (size_t i = 0; i < job["processes"].size(); ++i) {
      const nlohmann::json& p = job["processes"][i];
      static const nlohmann::json kNone;
      processes.push_back({{{"job", job_id}, {"node", node}, {"role", p.value("role", "")},
                            {"rank", std::to_string(p.value("rank", 0))}},
                           &p, i < last_lines.size() ? &last_lines[i] : &kNone});
    }

  PrometheusText out;
  // A process's figure from its last metrics line, for those whose line has it.
  const auto per_process = [&](const std::string& name, const std::string& help, const char* key) {
    out.family(name, Type::kGauge, help);
    for (const Process& p : processes)
      if (p.line->is_object() && p.line->contains(key) && (*p.line)[key].is_number())
        out.sample(p.labels, (*p.line)[key].get<double>());
  };
  per_process("paddle_step", "The last step the process logged.", "step");
  per_process("paddle_samples_per_second", "Samples the process trained per second over its last logged steps.",
              "samples_per_sec");
  per_process("paddle_loss", "The loss of the last step the process logged.", "loss");
  per_process("paddle_learning_rate", "The learning rate of the last step the process logged.", "lr");
  per_process("paddle_communication_seconds_per_step",
              "Seconds per step the process waited for communication it could not hide.", "comm_seconds_per_step");

  out.family("paddle_process_state", Type::kGauge, "1 for the process's state in job.json, 0 for the others.");
  for (const Process& p : processes)
    for (const char* state : kStates) {
      MetricLabels labels = p.labels;
      labels.emplace_back("state", state);
      out.sample(labels, p.info->value("state", "") == state ? 1 : 0);
    }

  // From the progress pages: our runtime's processes.
  const auto page_of = [&](size_t i) -> const common::ProgressReading* {
    return i < pages.size() && pages[i] ? &*pages[i] : nullptr;
  };
  out.family("paddle_seconds_since_progress", Type::kGauge,
             "Seconds since the process last marked progress on its page (a step, a phase, a collective).");
  for (size_t i = 0; i < processes.size(); ++i)
    if (const auto* page = page_of(i); page && processes[i].info->value("state", "") == "running")
      out.sample(processes[i].labels, page->seconds_since_mark(now_ns));
  out.family("paddle_step_seconds", Type::kGauge, "Seconds the process's last step took.");
  for (size_t i = 0; i < processes.size(); ++i)
    if (const auto* page = page_of(i); page && page->steps > 0) out.sample(processes[i].labels, page->step_seconds);
  out.family("paddle_straggler", Type::kGauge,
             "1 while the process is flagged a straggler (its busy time per step over the job's median past "
             "--straggler_factor), else 0.");
  for (size_t i = 0; i < processes.size(); ++i)
    if (page_of(i)) out.sample(processes[i].labels, processes[i].info->contains("straggler") &&
                                                            (*processes[i].info)["straggler"].is_number() ? 1 : 0);

  if (job.is_object()) {
    out.family("paddle_job_hung", Type::kGauge, "1 while a hang's verdict holds on this node (job.json's hang), else 0.");
    out.sample(node_labels, job.value("hang", std::string()).empty() ? 0 : 1);
    const double generation = number(job.value("restarts", nlohmann::json(0)));
    out.family("paddle_job_generation", Type::kGauge, "The job's generation (PADDLE_RESTART_COUNT): 0, then one more per restart.");
    out.sample(node_labels, generation);
    out.family("paddle_job_restarts_total", Type::kCounter,
               "Restarts of the job's processes (each generation after the first restarts them all).");
    out.sample(node_labels, generation);
    out.family("paddle_job_worker_restarts_total", Type::kCounter,
               "Parameter-server workers restarted alone, in place, on this node (--ps_worker_restarts).");
    out.sample(node_labels, number(job.value("worker_restarts", nlohmann::json(0))));
  }

  // A server's tables, from its last line that carries them.
  const auto per_table = [&](const std::string& name, Type type, const std::string& help,
                             const std::function<std::optional<double>(const nlohmann::json&)>& figure) {
    out.family(name, type, help);
    for (const Process& p : processes) {
      if (!p.line->is_object() || !p.line->contains("tables") || !(*p.line)["tables"].is_array()) continue;
      for (const nlohmann::json& table : (*p.line)["tables"]) {
        const auto value = figure(table);
        if (!value) continue;
        MetricLabels labels = p.labels;
        const bool named = table.contains("table") && table["table"].is_string();
        labels.emplace_back("table", named ? table["table"].get<std::string>() : std::string());
        out.sample(labels, *value);
      }
    }
  };
  const auto field = [](const char* key) {
    return [key](const nlohmann::json& t) -> std::optional<double> {
      if (!t.contains(key) || !t[key].is_number()) return std::nullopt;
      return t[key].get<double>();
    };
  };
  const auto tier_field = [](const char* key) {
    return [key](const nlohmann::json& t) -> std::optional<double> {
      if (!t.contains("tier") || !t["tier"].contains(key) || !t["tier"][key].is_number()) return std::nullopt;
      return t["tier"][key].get<double>();
    };
  };
  per_table("paddle_server_table_rows", Type::kGauge, "Rows a parameter server's table holds.", field("rows"));
  per_table("paddle_server_table_bytes", Type::kGauge, "Bytes of a parameter server's table in memory: values and index.",
            [](const nlohmann::json& t) -> std::optional<double> {
              if (!t.contains("value_bytes") && !t.contains("index_bytes")) return std::nullopt;
              return number(t.value("value_bytes", nlohmann::json(0))) + number(t.value("index_bytes", nlohmann::json(0)));
            });
  per_table("paddle_server_tier_hit_ratio", Type::kGauge,
            "The share of a tiered table's lookups its memory answered (0 to 1).", tier_field("hit_rate"));
  per_table("paddle_server_tier_disk_reads_per_second", Type::kGauge, "Reads a tiered table made from its disk tier per second.",
            tier_field("disk_reads_per_s"));

  out.family("paddle_launch_nodes", Type::kGauge, "Nodes in the job.");
  out.sample(node_labels, launcher.nodes);
  out.family("paddle_launch_heartbeats_missed_total", Type::kCounter,
             "Rounds in which this node's launcher could not reach the job's store.");
  out.sample(node_labels, static_cast<double>(launcher.heartbeats_missed));
  out.family("paddle_launch_store_requests_total", Type::kCounter, "Requests the job's store hosted on this node has served.");
  if (launcher.store_requests) out.sample(node_labels, static_cast<double>(*launcher.store_requests));
  return out.text();
}

}  // namespace paddle::launcher
