#include "launcher/dispatch/remote_hosts.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "common/error.h"
#include "common/parse.h"

namespace paddle::launcher {
namespace {

bool valid_host_text(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '-' || c == '_';
  });
}

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> names;
  std::string item;
  for (char c : list + ",") {
    if (c == ',' || c == '@') {
      if (auto t = std::string(common::trim(item)); !t.empty()) names.push_back(t);
      item.clear();
    } else {
      item += c;
    }
  }
  return names;
}

void check_unique(const std::vector<RemoteHost>& hosts, const std::string& what) {
  std::set<std::string> seen;
  for (const auto& h : hosts)
    if (!seen.insert(h.destination() + ":" + std::to_string(h.port.value_or(22))).second)
      throw common::UsageError(fmt::format("{}: host {} is listed twice", what, h.name()));
}

}  // namespace

std::string RemoteHost::name() const {
  std::string text = destination();
  if (port) text += ":" + std::to_string(*port);
  return text;
}

std::string RemoteHost::destination() const { return user.empty() ? host : user + "@" + host; }

RemoteHost parse_remote_host(const std::string& text, const std::string& what) {
  RemoteHost h;
  std::string rest = text;
  if (const size_t at = rest.find('@'); at != std::string::npos) {
    h.user = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (!valid_host_text(h.user)) throw common::UsageError(fmt::format("{}: '{}' has no valid user before '@'", what, text));
  }
  if (const size_t colon = rest.find(':'); colon != std::string::npos) {
    h.port = common::parse_port<common::UsageError>(rest.substr(colon + 1), fmt::format("{}: '{}'", what, text));
    rest = rest.substr(0, colon);
  }
  if (!valid_host_text(rest))
    throw common::UsageError(fmt::format("{}: '{}' is not user@host:port (host: letters, digits, '.', '-', '_')", what, text));
  h.host = rest;
  return h;
}

std::vector<RemoteHost> read_hostfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw common::UsageError(fmt::format("--hostfile: cannot read {}", path));
  std::vector<RemoteHost> hosts;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = fmt::format("{}:{}", path, number);
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string word;
    if (!(words >> word)) continue;
    RemoteHost h = parse_remote_host(word, where);
    while (words >> word) {
      if (!word.starts_with("slots="))
        throw common::UsageError(fmt::format("{}: '{}': a host takes only slots=N after it", where, word));
      h.slots = static_cast<int>(common::parse_int<common::UsageError>(word.substr(6), where + ": slots", 1, 4096));
    }
    hosts.push_back(std::move(h));
  }
  if (hosts.empty()) throw common::UsageError(fmt::format("--hostfile: {} names no host", path));
  check_unique(hosts, "--hostfile " + path);
  return hosts;
}

std::vector<RemoteHost> parse_host_list(const std::string& list, const std::string& what) {
  std::vector<RemoteHost> hosts;
  for (const auto& item : common::split_list<common::UsageError>(list, what)) hosts.push_back(parse_remote_host(item, what));
  if (hosts.empty()) throw common::UsageError(fmt::format("{}: no host given", what));
  check_unique(hosts, what);
  return hosts;
}

std::vector<RemoteHost> select_hosts(const std::vector<RemoteHost>& hosts, const std::string& include,
                                     const std::string& exclude) {
  const auto known = [&](const std::string& name, const char* flag) {
    if (std::none_of(hosts.begin(), hosts.end(), [&](const RemoteHost& h) { return h.host == name || h.name() == name; }))
      throw common::UsageError(fmt::format("{}: '{}' is not one of the job's hosts", flag, name));
  };
  const std::vector<std::string> included = split_names(include), excluded = split_names(exclude);
  for (const auto& n : included) known(n, "--include");
  for (const auto& n : excluded) known(n, "--exclude");
  const auto named = [](const std::vector<std::string>& names, const RemoteHost& h) {
    return std::find(names.begin(), names.end(), h.host) != names.end() ||
           std::find(names.begin(), names.end(), h.name()) != names.end();
  };
  std::vector<RemoteHost> chosen;
  for (const auto& h : hosts)
    if ((included.empty() || named(included, h)) && !named(excluded, h)) chosen.push_back(h);
  if (chosen.empty()) throw common::UsageError("--include/--exclude: no host is left to run on");
  return chosen;
}

}  // namespace paddle::launcher
