#include "launcher/dispatch/ssh_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "common/error.h"

namespace paddle::launcher {
namespace {

// rsync's -e takes one string that it splits itself at spaces, honouring single and double
// quotes but not backslashes.
std::string rsync_quote(const std::string& word) {
  if (shell_quote(word) == word) return word;
  if (word.find('\'') == std::string::npos) return "'" + word + "'";
  if (word.find('"') == std::string::npos) return "\"" + word + "\"";
  throw common::UsageError(fmt::format("--ssh_opt: rsync cannot be given '{}', which holds both kinds of quote", word));
}

std::string rsync_remote_shell(const RemoteHost& host, const SshSettings& ssh) {
  std::string line = "ssh";
  const std::vector<std::string> args = ssh_arguments(host, ssh);
  for (auto arg = args.begin(); arg + 1 != args.end(); ++arg) line += " " + rsync_quote(*arg);  // rsync adds the destination
  return line;
}

std::string rsync_destination(const RemoteHost& host, const std::string& path) {
  return host.destination() + ":" + path;
}

}  // namespace

std::vector<std::string> split_ssh_options(const std::vector<std::string>& values) {
  std::vector<std::string> words;
  for (const std::string& value : values) {
    std::istringstream in(value);
    for (std::string word; in >> word;) words.push_back(word);
  }
  return words;
}

std::string shell_quote(const std::string& text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) {
    return std::isalnum(c) || std::string_view("@%_+=:,./-").find(static_cast<char>(c)) != std::string_view::npos;
  });
  if (plain) return text;
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string shell_command(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& word : words) {
    if (!line.empty()) line += ' ';
    line += shell_quote(word);
  }
  return line;
}

std::vector<std::string> ssh_arguments(const RemoteHost& host, const SshSettings& ssh) {
  std::vector<std::string> args = {"-o", "BatchMode=yes",
                                   "-o", fmt::format("ConnectTimeout={}", ssh.connect_timeout_s),
                                   "-o", "ServerAliveInterval=5",
                                   "-o", "ServerAliveCountMax=3"};
  if (host.port) {
    args.push_back("-p");
    args.push_back(std::to_string(*host.port));
  }
  args.insert(args.end(), ssh.options.begin(), ssh.options.end());
  args.push_back(host.destination());
  return args;
}

std::vector<std::string> ssh_argv(const RemoteHost& host, const SshSettings& ssh, const std::string& remote_command) {
  std::vector<std::string> argv = {"ssh"};
  const std::vector<std::string> args = ssh_arguments(host, ssh);
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(remote_command);
  return argv;
}

std::vector<std::string> rsync_push_argv(const RemoteHost& host, const SshSettings& ssh, const std::string& from,
                                         const std::string& to, const std::vector<std::string>& keep) {
  std::vector<std::string> argv = {"rsync", "--archive", "--delete", "--mkpath", "-e", rsync_remote_shell(host, ssh)};
  for (const std::string& path : keep) argv.push_back("--exclude=/" + path);
  argv.push_back(from.ends_with('/') ? from : from + "/");
  argv.push_back(rsync_destination(host, to.ends_with('/') ? to : to + "/"));
  return argv;
}

std::vector<std::string> rsync_pull_argv(const RemoteHost& host, const SshSettings& ssh, const std::string& from,
                                         const std::string& to) {
  return {"rsync", "--archive", "--mkpath", "-e", rsync_remote_shell(host, ssh),
          rsync_destination(host, from.ends_with('/') ? from : from + "/"), to.ends_with('/') ? to : to + "/"};
}

std::string ssh_reason(const std::string& output) {
  std::istringstream in(output);
  std::string reason;
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty() || line.starts_with("Warning: Permanently added")) continue;
    reason = line;
  }
  return reason.empty() ? "no output" : reason;
}

}  // namespace paddle::launcher
