#pragma once
// Crash handlers: make a process leave its ErrorRecord (common/error_record.h) when it dies of
// what it cannot catch: std::terminate (an exception escaping a thread, a throwing destructor)
// and the fatal signals SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT.
//
// The signal handler is async-signal-safe: it formats the record into a buffer with its own
// digits, no allocation and no locks; the frames come from Boost.Stacktrace's safe_dump_to,
// each written as MODULE+0xOFFSET from a table of the loaded modules taken at installation.
// Names are added by the reader (the launcher runs addr2line on them:
// launcher/supervise/root_cause.h).
// The handler then restores the signal's default action and raises it again, so the process
// still dies of its signal and its exit status tells the launcher so.
//
// A signal handler can reach nothing but globals: the installation writes one table, once,
// before any handler can run, and the handlers only read it.

#include "common/environment.h"

namespace paddle::common {

// Installs the handlers when the environment names an error file (error_file_path); does
// nothing otherwise. Call it once, early in main.
void install_crash_handlers(const Environment& env);

}  // namespace paddle::common
