#pragma once
// The OpenSSH and rsync command lines of a dispatched job. Every ssh runs in BatchMode (a
// password or passphrase prompt fails at once instead of hanging), with a connect timeout and
// keep-alives, host-key checking as the user's ssh config has it, then the user's --ssh_opt.
// rsync goes over the same ssh, so the same keys, ports and options apply.

#include <string>
#include <vector>

#include "launcher/dispatch/remote_hosts.h"

namespace paddle::launcher {

struct SshSettings {
  std::vector<std::string> options;  // --ssh_opt values, split at spaces
  int connect_timeout_s = 10;
};

// --ssh_opt values as ssh arguments: each value is split at spaces ("-o A=B" -> "-o", "A=B");
// an option whose value holds spaces belongs in an ssh config file (-F FILE).
std::vector<std::string> split_ssh_options(const std::vector<std::string>& values);

// `text` quoted for a POSIX shell: as it is when it needs no quoting, else in single quotes.
std::string shell_quote(const std::string& text);
// Each word quoted, joined by spaces.
std::string shell_command(const std::vector<std::string>& words);

// ssh's arguments (without "ssh") up to and including the destination.
std::vector<std::string> ssh_arguments(const RemoteHost& host, const SshSettings& ssh);

// ssh ... DESTINATION REMOTE_COMMAND: `remote_command` is one line for the remote user's shell.
std::vector<std::string> ssh_argv(const RemoteHost& host, const SshSettings& ssh, const std::string& remote_command);

// rsync of the local directory `from` to `to` on `host`, made incremental by rsync itself:
// files removed here are removed there, and `keep` (relative paths such as "log") are neither
// copied nor removed. `to`'s parents are made as needed.
std::vector<std::string> rsync_push_argv(const RemoteHost& host, const SshSettings& ssh, const std::string& from,
                                         const std::string& to, const std::vector<std::string>& keep);

// rsync of `from` on `host` into the local directory `to`.
std::vector<std::string> rsync_pull_argv(const RemoteHost& host, const SshSettings& ssh, const std::string& from,
                                         const std::string& to);

// What ssh printed last, for a one-line report: the last line that is not a warning about
// adding a host key, without its trailing newline; "no output" when there is none.
std::string ssh_reason(const std::string& output);

}  // namespace paddle::launcher
