#pragma once
// ErrorRecord: what a process of the job leaves in its error file (PADDLE_ERROR_FILE, which the
// launcher sets to LOG_DIR/error.<role>.<rank>.json) when it fails, so that the launcher's
// report can lead with the root cause rather than the last lines of a log.
//
// The file is torch's error file (TORCHELASTIC_ERROR_FILE, the one `@record` writes), so a
// torch program's record reads the same, with our details beside it:
//
//   {"message": {"message": "paddle::common::PeerError: rank 1 ...",
//                "extraInfo": {"py_callstack": "<frames, one a line>", "timestamp": "1763900000"}},
//    "paddle": {"kind": "exception" | "terminate" | "signal",
//               "type": "paddle::common::PeerError", "what": "rank 1 ...",
//               "chain": ["what the nested exceptions said, outermost first", ...],
//               "peer": true,                       // a peer failed first: likely a side effect
//               "signal": "SIGSEGV",                // kind "signal"
//               "frames": ["#0 /path/train+0x1a2b3", ...],   // module+offset, innermost first
//               "pid": 4242}}
//
// The first record wins: a process that throws, then aborts, keeps the exception.

#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "common/environment.h"

namespace paddle::common {

struct ErrorRecord {
  std::string kind;  // "exception", "terminate", "signal", or "python" for torch's
  std::string type;
  std::string what;
  std::vector<std::string> chain;
  bool peer = false;
  std::string signal;
  std::vector<std::string> frames;
  long pid = 0;
  long timestamp = 0;

  // "TYPE: WHAT", and the chain's messages each on a line "caused by: ...".
  std::string headline() const;
  std::string to_json() const;
  // Ours or torch's; nothing for text that is neither (a half-written or foreign file).
  static std::optional<ErrorRecord> from_json(const std::string& text);
};

// The record of a caught exception: its type (demangled), message and nested exceptions;
// `peer` when it is a common::PeerError.
ErrorRecord record_exception(const std::exception_ptr& error);

// PADDLE_ERROR_FILE, else TORCHELASTIC_ERROR_FILE; nothing when neither is set.
std::optional<std::string> error_file_path(const Environment& env);

// Writes `record` to `path` unless a record is there already (the first failure wins). Never
// throws: a process that is failing has nothing better to do with an error here.
void write_error_record(const std::string& path, const ErrorRecord& record);

// The record at `path`; nothing when there is none or it is unreadable.
std::optional<ErrorRecord> read_error_record(const std::string& path);

}  // namespace paddle::common
