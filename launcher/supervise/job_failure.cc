#include "launcher/supervise/job_failure.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"

namespace paddle::launcher {
namespace {

std::string indent_lines(const std::string& text) {
  std::string out = "  ";
  for (char c : text) {
    out += c;
    if (c == '\n') out += "  ";
  }
  return out;
}

}  // namespace

nlohmann::json JobFailure::to_json() const {
  return {{"cause", static_cast<int>(cause)}, {"node_rank", node_rank}, {"ip", ip},     {"hostname", hostname},
          {"what", what}, {"exit_status", exit_status}, {"log_file", log_file}, {"tail", tail},
          {"own_account", own_account}};
}

JobFailure JobFailure::from_json(const std::string& text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    JobFailure f;
    f.node_rank = j.at("node_rank");
    f.ip = j.at("ip");
    f.hostname = j.at("hostname");
    f.what = j.at("what");
    f.exit_status = j.at("exit_status");
    f.log_file = j.at("log_file");
    f.tail = j.at("tail");
    f.own_account = j.value("own_account", "");
    f.cause = static_cast<Cause>(std::clamp(j.at("cause").get<int>(), 0, 5));
    return f;
  } catch (const std::exception& e) {
    throw common::PeerError(fmt::format("the master holds a malformed failure report ({}): {}", e.what(), text));
  }
}

std::string JobFailure::describe() const {
  std::string text = node_rank >= 0 ? fmt::format("node {} ({}, {}): {}", node_rank, ip, hostname, what)
                                    : fmt::format("a new node ({}, {}): {}", ip, hostname, what);
  if (!own_account.empty()) text += "\n" + indent_lines(own_account);
  if (!log_file.empty()) text += fmt::format("{}log: {}", own_account.empty() ? "; " : "\n  ", log_file);
  if (!tail.empty()) text += ", last lines:\n" + tail;
  return text;
}

}  // namespace paddle::launcher
