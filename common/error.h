#pragma once
// Error: the one base of every error paddle-launch's libraries throw. It carries the exit
// status a program should end with, so `main` is one catch:
//
//   catch (const paddle::common::Error& e) { print(e.what()); return e.exit_code(); }
//
// The kinds below say whose fault it is; libraries derive their own from them
// (collective::CollectiveError is a PeerError, runtime::CheckpointError a DataError). Every
// message names the flag, variable, file:line or peer at fault, and what to do where that is
// known.

#include <stdexcept>
#include <string>

namespace paddle::common {

// Exit statuses: 1 is a failure at run time, 2 is input that was wrong from the start.
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;
// A parameter-server worker restarted in place that cannot take up its part alone
// (runtime/train/workloads/worker_progress.h): EX_TEMPFAIL, so that its launcher restarts the whole job.
inline constexpr int kExitCannotRejoin = 75;
// The launcher stopped a job that made no progress for --hang_timeout (--on_hang=stop).
inline constexpr int kExitHung = 123;

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, int exit_code = kExitFailure)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// A flag or command line is wrong.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(message, kExitBadInput) {}
};

// A configuration value (a config file key, an environment variable) is wrong.
class ConfigError : public Error {
 public:
  explicit ConfigError(const std::string& message) : Error(message, kExitBadInput) {}
};

// A data or result file is missing, malformed or could not be written.
class DataError : public Error {
 public:
  explicit DataError(const std::string& message) : Error(message, kExitFailure) {}
};

// A peer (a rank, a server, the store) failed, left or spoke out of protocol.
class PeerError : public Error {
 public:
  explicit PeerError(const std::string& message) : Error(message, kExitFailure) {}
};

// Something waited for did not happen in time; the message says what and for how long.
class TimeoutError : public Error {
 public:
  explicit TimeoutError(const std::string& message) : Error(message, kExitFailure) {}
};

}  // namespace paddle::common
