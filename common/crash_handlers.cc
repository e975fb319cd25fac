#include "common/crash_handlers.h"

#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <unistd.h>

#include <boost/stacktrace/safe_dump_to.hpp>
#include <cstring>
#include <ctime>
#include <exception>

#include "common/error_record.h"

namespace paddle::common {
namespace {

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr size_t kMaxFrames = 64;
constexpr size_t kMaxModules = 256;

struct Module {
  uintptr_t start = 0, end = 0, bias = 0;
  char path[512] = {};
};

// Everything the handlers read; written by install_crash_handlers only.
struct CrashTable {
  char error_file[4096] = {};
  Module modules[kMaxModules];
  size_t module_count = 0;
  alignas(16) char alternate_stack[64 * 1024];
};
CrashTable crash_table;

// Appends to a fixed buffer: text, JSON strings, numbers. Async-signal-safe.
class SafeText {
 public:
  void text(const char* s) {
    while (*s && size_ < sizeof buffer_ - 1) buffer_[size_++] = *s++;
    buffer_[size_] = '\0';
  }
  void json_string(const char* s) {
    text("\"");
    for (char one[2] = {0, 0}; *s; ++s) {
      if (*s == '"' || *s == '\\') text("\\");
      if (static_cast<unsigned char>(*s) < 0x20) continue;
      one[0] = *s;
      text(one);
    }
    text("\"");
  }
  void number(unsigned long value, unsigned base = 10) {
    char digits[24];
    int n = 0;
    do {
      digits[n++] = "0123456789abcdef"[value % base];
      value /= base;
    } while (value && n < 24);
    if (base == 16) text("0x");
    char out[2] = {0, 0};
    while (n > 0) {
      out[0] = digits[--n];
      text(out);
    }
  }
  const char* data() const { return buffer_; }  // nul-terminated
  size_t size() const { return size_; }
  void clear() {
    size_ = 0;
    buffer_[0] = '\0';
  }

 private:
  char buffer_[32 * 1024] = {};
  size_t size_ = 0;
};

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
  }
  return "a fatal signal";
}

// "#N MODULE+0xOFFSET" (or the bare address outside every module) into `out`.
void frame_text(SafeText& out, size_t index, const void* address) {
  const auto at = reinterpret_cast<uintptr_t>(address);
  out.text("#");
  out.number(index);
  out.text(" ");
  for (size_t m = 0; m < crash_table.module_count; ++m) {
    const Module& module = crash_table.modules[m];
    if (at >= module.start && at < module.end) {
      out.text(module.path);
      out.text("+");
      out.number(at - module.bias, 16);
      return;
    }
  }
  out.number(at, 16);
}

// The calls on this thread's stack, innermost first, less the `skip` innermost.
size_t collect_frames(void* (&frames)[kMaxFrames], size_t skip) {
  size_t count = boost::stacktrace::safe_dump_to(skip, frames, sizeof frames);
  while (count > 0 && frames[count - 1] == nullptr) --count;  // the terminating zero frame
  return count;
}

// The whole record, in ErrorRecord's JSON, for a death by `sig` or (sig 0) std::terminate.
void write_record(int sig, const char* type, const char* what) {
  void* frames[kMaxFrames] = {};
  const size_t count = collect_frames(frames, 2);
  static SafeText record, frame;  // static: too big for an alternate stack
  record.clear();
  record.text("{\"message\": {\"message\": ");
  if (sig) {
    record.text("\"died by ");
    record.text(signal_name(sig));
    record.text("\"");
  } else {
    record.json_string(what);
  }
  record.text(", \"extraInfo\": {\"py_callstack\": \"");
  for (size_t i = 0; i < count; ++i) {
    frame.clear();
    frame_text(frame, i, frames[i]);
    record.text(frame.data());  // module paths were checked for quotes at installation
    record.text("\\n");
  }
  record.text("\", \"timestamp\": \"");
  record.number(static_cast<unsigned long>(::time(nullptr)));
  record.text("\"}},\n \"paddle\": {\"kind\": ");
  record.text(sig ? "\"signal\"" : "\"terminate\"");
  record.text(", \"type\": ");
  record.json_string(type);
  record.text(", \"what\": ");
  record.json_string(sig ? "" : what);
  record.text(", \"chain\": [], \"peer\": false, \"signal\": ");
  record.json_string(sig ? signal_name(sig) : "");
  record.text(", \"frames\": [");
  for (size_t i = 0; i < count; ++i) {
    frame.clear();
    frame_text(frame, i, frames[i]);
    if (i) record.text(", ");
    record.text("\"");
    record.text(frame.data());
    record.text("\"");
  }
  record.text("], \"pid\": ");
  record.number(static_cast<unsigned long>(::getpid()));
  record.text("}}\n");
  const int fd = ::open(crash_table.error_file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return;  // a record is there already: the first failure wins
  for (size_t done = 0; done < record.size();) {
    const ssize_t n = ::write(fd, record.data() + done, record.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

void on_fatal_signal(int sig, siginfo_t*, void*) {
  const int saved_errno = errno;
  write_record(sig, "", "");
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  ::sigemptyset(&default_action.sa_mask);
  ::sigaction(sig, &default_action, nullptr);
  errno = saved_errno;
  ::raise(sig);  // delivered once this handler returns: the process dies of its signal
}

void on_terminate() {
  if (const auto error = std::current_exception()) {
    // An exception no handler caught: the stack is still where it was thrown.
    ErrorRecord record = record_exception(error);
    record.kind = "terminate";
    void* frames[kMaxFrames] = {};
    const size_t count = collect_frames(frames, 1);
    for (size_t i = 0; i < count; ++i) {
      SafeText frame;
      frame_text(frame, i, frames[i]);
      record.frames.emplace_back(frame.data());
    }
    write_error_record(crash_table.error_file, record);
  } else {
    write_record(0, "std::terminate", "std::terminate was called without an active exception");
  }
  std::abort();
}

int add_module(dl_phdr_info* info, size_t, void*) {
  char path[512] = {};
  if (info->dlpi_name && info->dlpi_name[0]) {
    std::strncpy(path, info->dlpi_name, sizeof path - 1);
  } else {
    const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0) return 0;
    path[n] = '\0';
  }
  if (std::strpbrk(path, "\"\\")) return 0;  // a name the handler could not write as JSON
  for (int i = 0; i < info->dlpi_phnum && crash_table.module_count < kMaxModules; ++i) {
    const auto& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD || !(segment.p_flags & PF_X)) continue;
    Module& m = crash_table.modules[crash_table.module_count++];
    m.start = info->dlpi_addr + segment.p_vaddr;
    m.end = m.start + segment.p_memsz;
    m.bias = info->dlpi_addr;
    std::memcpy(m.path, path, sizeof m.path);
  }
  return 0;
}

}  // namespace

void install_crash_handlers(const Environment& env) {
  const auto path = error_file_path(env);
  if (!path || path->size() >= sizeof crash_table.error_file) return;
  std::strncpy(crash_table.error_file, path->c_str(), sizeof crash_table.error_file - 1);
  crash_table.module_count = 0;
  ::dl_iterate_phdr(add_module, nullptr);
  void* warm[2];
  boost::stacktrace::safe_dump_to(warm, sizeof warm);  // loads the unwinder now, not in a handler

  stack_t alternate{};
  alternate.ss_sp = crash_table.alternate_stack;
  alternate.ss_size = sizeof crash_table.alternate_stack;
  ::sigaltstack(&alternate, nullptr);  // a stack overflow still gets its record
  struct sigaction action {};
  action.sa_sigaction = on_fatal_signal;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  ::sigemptyset(&action.sa_mask);
  for (int sig : kFatalSignals) ::sigaction(sig, &action, nullptr);
  std::set_terminate(on_terminate);
}

}  // namespace paddle::common
