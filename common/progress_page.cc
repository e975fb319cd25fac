#include "common/progress_page.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fmt/format.h>

#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/byte_size.h"
#include "common/error.h"

namespace paddle::common {
namespace {

constexpr int kWords = 12;
constexpr size_t kPageBytes = kWords * sizeof(uint64_t);
constexpr size_t kFileBytes = 4096;  // one memory page: the mapping's unit
constexpr uint64_t kMagic = 0x31304752504c4450ULL;  // "PDLPRG01" as bytes, little-endian

enum Word { kMagicWord, kMarks, kSteps, kPhase, kCollectives, kCollectiveBytes, kPhaseBegan, kLastMark,
            kStepSeconds, kBusySeconds, kStragglerRatio, kStragglerSince };

uint64_t bits(double value) { return std::bit_cast<uint64_t>(value); }
double from_bits(uint64_t value) { return std::bit_cast<double>(value); }

std::string with_thousands(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

int64_t monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string phase_name(Phase phase) {
  switch (phase) {
    case Phase::kStarting: return "starting";
    case Phase::kDataLoading: return "data loading";
    case Phase::kCompute: return "compute";
    case Phase::kCollective: return "a collective";
    case Phase::kPsPull: return "a pull from the servers";
    case Phase::kPsPush: return "a push to the servers";
    case Phase::kEvaluation: return "evaluation";
    case Phase::kCheckpointSave: return "a checkpoint save";
    case Phase::kServing: return "serving";
    case Phase::kFinished: return "finished";
  }
  return fmt::format("phase {}", static_cast<uint32_t>(phase));
}

std::string collective_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kNone: return "no collective";
    case CollectiveKind::kAllreduce: return "allreduce";
    case CollectiveKind::kBroadcast: return "broadcast";
    case CollectiveKind::kAllgather: return "allgather";
    case CollectiveKind::kBarrier: return "barrier";
  }
  return fmt::format("collective {}", static_cast<uint32_t>(kind));
}

bool waits_on_others(Phase phase) {
  return phase == Phase::kCollective || phase == Phase::kPsPull || phase == Phase::kPsPush;
}

std::unique_ptr<ProgressPage> ProgressPage::from_environment(const Environment& env) {
  const std::string path = get_env(env, "PADDLE_PROGRESS_FILE").value_or("");
  if (path == "off") {
    auto page = std::make_unique<ProgressPage>();
    page->marking_ = false;
    return page;
  }
  return path.empty() ? std::make_unique<ProgressPage>() : std::make_unique<ProgressPage>(path);
}

ProgressPage::ProgressPage() : own_(new uint64_t[kWords]()) {
  words_ = own_.get();
  phase_began_ns_ = step_began_ns_ = monotonic_ns();
}

ProgressPage::ProgressPage(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(fmt::format("PADDLE_PROGRESS_FILE={}: cannot open it: {}", path, std::strerror(errno)));
  void* mapped = MAP_FAILED;
  if (::ftruncate(fd, kFileBytes) == 0)
    mapped = ::mmap(nullptr, kFileBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int error = errno;
  ::close(fd);
  if (mapped == MAP_FAILED)
    throw Error(fmt::format("PADDLE_PROGRESS_FILE={}: cannot map it: {}", path, std::strerror(error)));
  words_ = static_cast<uint64_t*>(mapped);
  std::memset(words_, 0, kPageBytes);  // a page left by an earlier start of this rank is not ours
  phase_began_ns_ = step_began_ns_ = monotonic_ns();
  store(kPhaseBegan, static_cast<uint64_t>(phase_began_ns_));
  store(kLastMark, static_cast<uint64_t>(phase_began_ns_));
  std::atomic_ref<uint64_t>(words_[kMagicWord]).store(kMagic, std::memory_order_release);
}

ProgressPage::~ProgressPage() {
  if (!own_) ::munmap(words_, kFileBytes);
}

void ProgressPage::store(int word, uint64_t value) {
  std::atomic_ref<uint64_t>(words_[word]).store(value, std::memory_order_relaxed);
}

void ProgressPage::mark(Phase phase) {
  if (!marking_) return;
  const int64_t now = monotonic_ns();
  if (waits_on_others(phase_)) waited_in_step_ns_ += now - phase_began_ns_;
  phase_ = phase;
  phase_began_ns_ = now;
  store(kPhase, static_cast<uint64_t>(phase) | (static_cast<uint64_t>(collective_kind_) << 32));
  store(kPhaseBegan, static_cast<uint64_t>(now));
  store(kLastMark, static_cast<uint64_t>(now));
  std::atomic_ref<uint64_t>(words_[kMarks]).store(++marks_, std::memory_order_release);
}

void ProgressPage::enter(Phase phase) { mark(phase); }

void ProgressPage::enter_collective(CollectiveKind kind, uint64_t bytes) {
  if (!marking_) return;
  store(kCollectives, ++collectives_);
  store(kCollectiveBytes, bytes);
  collective_kind_ = kind;
  mark(Phase::kCollective);
}

void ProgressPage::begin_steps() {
  if (!marking_) return;
  step_began_ns_ = monotonic_ns();
  waited_in_step_ns_ = waits_on_others(phase_) ? -(step_began_ns_ - phase_began_ns_) : 0;
}

void ProgressPage::step_done() {
  if (!marking_) return;
  const int64_t now = monotonic_ns();
  const int64_t waited = waited_in_step_ns_ + (waits_on_others(phase_) ? now - phase_began_ns_ : 0);
  const double step_seconds = static_cast<double>(now - step_began_ns_) * 1e-9;
  last_busy_seconds_ = std::max(0.0, step_seconds - static_cast<double>(waited) * 1e-9);
  step_began_ns_ = now;
  waited_in_step_ns_ = waits_on_others(phase_) ? -(now - phase_began_ns_) : 0;  // the part before the step's end
  store(kSteps, static_cast<uint64_t>(++steps_));
  store(kStepSeconds, bits(step_seconds));
  store(kBusySeconds, bits(last_busy_seconds_));
  store(kLastMark, static_cast<uint64_t>(now));
  std::atomic_ref<uint64_t>(words_[kMarks]).store(++marks_, std::memory_order_release);
}

void ProgressPage::set_straggler(double ratio, int64_t since_step) {
  store(kStragglerRatio, bits(ratio));
  store(kStragglerSince, static_cast<uint64_t>(since_step));
}

ProgressPage::Scope::Scope(ProgressPage& page, Phase phase) : page_(page), before_(page.phase()) { page.enter(phase); }

ProgressPage::Scope::Scope(ProgressPage& page, CollectiveKind kind, uint64_t bytes) : page_(page), before_(page.phase()) {
  page.enter_collective(kind, bytes);
}

ProgressPage::Scope::~Scope() { page_.enter(before_); }

double ProgressReading::seconds_in_phase(int64_t now_ns) const {
  return std::max<double>(0, static_cast<double>(now_ns - phase_began_ns) * 1e-9);
}

double ProgressReading::seconds_since_mark(int64_t now_ns) const {
  return std::max<double>(0, static_cast<double>(now_ns - last_mark_ns) * 1e-9);
}

std::string ProgressReading::collective_label() const {
  if (collectives == 0) return "";
  return fmt::format("{} #{}", collective_name(collective), with_thousands(collectives));
}

std::string ProgressReading::describe(int64_t now_ns) const {
  const std::string where = phase == Phase::kCollective
                                ? fmt::format("in {} ({})", collective_label(), byte_size(collective_bytes))
                                : fmt::format("in {}", phase_name(phase));
  std::string last = collectives > 0 && phase != Phase::kCollective ? fmt::format(", last collective {}", collective_label()) : "";
  return fmt::format("{} for {:.0f} s, after step {}{}", where, seconds_in_phase(now_ns), with_thousands(steps), last);
}

std::optional<ProgressReading> read_progress_page(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  uint64_t w[kWords] = {};
  const ssize_t got = ::pread(fd, w, kPageBytes, 0);
  ::close(fd);
  if (got != static_cast<ssize_t>(kPageBytes) || w[kMagicWord] != kMagic) return std::nullopt;
  ProgressReading r;
  r.marks = w[kMarks];
  r.steps = static_cast<int64_t>(w[kSteps]);
  r.phase = static_cast<Phase>(w[kPhase] & 0xffffffffu);
  r.collective = static_cast<CollectiveKind>(w[kPhase] >> 32);
  r.collectives = w[kCollectives];
  r.collective_bytes = w[kCollectiveBytes];
  r.phase_began_ns = static_cast<int64_t>(w[kPhaseBegan]);
  r.last_mark_ns = static_cast<int64_t>(w[kLastMark]);
  r.step_seconds = from_bits(w[kStepSeconds]);
  r.busy_seconds = from_bits(w[kBusySeconds]);
  r.straggler_ratio = from_bits(w[kStragglerRatio]);
  r.straggler_since = static_cast<int64_t>(w[kStragglerSince]);
  return r;
}

}  // namespace paddle::common
