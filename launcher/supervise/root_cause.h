#pragma once
// Root cause: what a failed process said of its own failure in its error record
// (common/error_record.h), ready to lead the launcher's failure report: the exception and the
// ones nested in it, or the signal, and the top frames, named.
//
// A C++ process's frames come as MODULE+0xOFFSET (its crash handler could not name them
// safely); they are named here, in the healthy launcher, by addr2line from binutils. A
// Python process's frames (torch's record) are its traceback's lines, kept as they are.

#include <optional>
#include <string>
#include <vector>

#include "common/error_record.h"

namespace paddle::launcher {

struct RootCause {
  common::ErrorRecord record;
  std::string file;

  // The record at `error_file`, or nothing when the process left none.
  static std::optional<RootCause> read(const std::string& error_file);
  // "std::runtime_error: boom\ncaused by: ...\nat #0 main at train_main.cc:42\n..." with at
  // most `max_frames` frames.
  std::string describe(size_t max_frames = 8) const;
};

// "#N MODULE+0xOFFSET" frames named, "#N function at file:line", by addr2line; frames it cannot
// name, and frames of any other form, stay as they are.
std::vector<std::string> name_frames(const std::vector<std::string>& frames);

}  // namespace paddle::launcher
