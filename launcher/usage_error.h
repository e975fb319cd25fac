#pragma once
// UsageError: the user's input (a flag, an environment variable, a file they named) is wrong.
// The launcher reports it as one line naming the culprit and exits with status 2 before
// anything is started.

#include <stdexcept>
#include <string>

namespace paddle_launch {

class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace paddle_launch
