#include "collective/shm_communicator.h"

#include "collective/shm_reduce_buffer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <ctime>

namespace paddle::collective {
namespace {

using Clock = std::chrono::steady_clock;
using Floats = Eigen::Map<Eigen::ArrayXf>;
using ConstFloats = Eigen::Map<const Eigen::ArrayXf>;

constexpr size_t kLine = 64;
constexpr size_t kAlign = 16;                      // floats: shares start on cache lines
constexpr size_t kSmallAllreduceBytes = 64 << 10;  // up to here every rank sums every slot
constexpr size_t kBlockFloats = 2048;              // a reduction's unit of work: 8 KB stays in L1
constexpr int kSpins = 256;
constexpr auto kYieldFor = std::chrono::microseconds(50);  // then sleep: a late peer may need this core
constexpr long kSleepNanos = 5'000'000;

struct alignas(kLine) RankState {
  uint64_t arrived;  // the last step this rank arrived at
  uint64_t failed;   // the last step of a set-up (agree) that failed on this rank
  int32_t pid;
};

struct alignas(kLine) WakeState {
  uint32_t wake;      // futex word, bumped by an arrival that finds sleepers
  uint32_t sleepers;  // ranks in futex_wait
};

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

size_t header_bytes(int size) { return round_up(sizeof(RankState) * size + sizeof(WakeState), 4096); }

int open_pidfd(int pid) {
#ifdef SYS_pidfd_open
  if (pid > 0 && pid != getpid()) return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#endif
  return -1;
}

std::string list(const std::vector<int>& ranks) { return fmt::format("{}", fmt::join(ranks, ", ")); }

}  // namespace

struct ShmCommunicator::Layout {
  RankState* ranks;
  WakeState* wake;
  float* slots;
};

ShmCommunicator::ShmCommunicator(int rank, int size, gloo::rendezvous::Store& store, const ShmOptions& options,
                                 Diagnosis diagnose)
    : rank_(rank), size_(size), options_(options), diagnose_(std::move(diagnose)) {
  if (options_.names.empty())
    for (int i = 0; i < size; ++i) options_.names.push_back(i);
  const size_t unit = kAlign * static_cast<size_t>(size);
  slot_floats_ = std::max(unit, options.slot_bytes / sizeof(float) / unit * unit);
  const size_t bytes = header_bytes(size) + 2 * static_cast<size_t>(size) * slot_floats_ * sizeof(float);
  ShmSegmentConfig config{options.key_prefix, rank, size, options.job_id, options.generation, options.timeout};
  segment_ = std::make_unique<ShmSegment>(config, store, bytes);
  auto* base = static_cast<char*>(segment_->data());
  layout_ = std::make_unique<Layout>(Layout{reinterpret_cast<RankState*>(base),
                                            reinterpret_cast<WakeState*>(base + sizeof(RankState) * size),
                                            reinterpret_cast<float*>(base + header_bytes(size))});
  std::atomic_ref<int32_t>(layout_->ranks[rank].pid).store(getpid(), std::memory_order_release);
  step();
  for (int p = 0; p < size; ++p)
    peer_pidfds_.push_back(open_pidfd(std::atomic_ref<int32_t>(layout_->ranks[p].pid).load(std::memory_order_acquire)));
}

ShmCommunicator::~ShmCommunicator() {
  for (int fd : peer_pidfds_)
    if (fd >= 0) ::close(fd);
}

float* ShmCommunicator::slot(int half, int member) const {
  return layout_->slots + (static_cast<size_t>(half) * size_ + member) * slot_floats_;
}

void ShmCommunicator::step() {
  ++epoch_;
  std::atomic_ref<uint64_t>(layout_->ranks[rank_].arrived).store(epoch_, std::memory_order_seq_cst);
  WakeState& w = *layout_->wake;
  if (std::atomic_ref<uint32_t>(w.sleepers).load(std::memory_order_seq_cst) != 0) {
    std::atomic_ref<uint32_t>(w.wake).fetch_add(1, std::memory_order_seq_cst);
    syscall(SYS_futex, &w.wake, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
  }
  for (int spin = 0; spin < kSpins; ++spin) {
    if (all_arrived(epoch_)) return;
    cpu_relax();
  }
  wait_slowly(epoch_);
}

void ShmCommunicator::agree(const std::string& why, const std::string& what_failed) {
  if (!why.empty()) std::atomic_ref<uint64_t>(layout_->ranks[rank_].failed).store(epoch_ + 1, std::memory_order_release);
  step();
  if (!why.empty()) throw CollectiveError(why);
  std::vector<int> failed;
  for (int p = 0; p < size_; ++p)
    if (std::atomic_ref<uint64_t>(layout_->ranks[p].failed).load(std::memory_order_acquire) == epoch_)
      failed.push_back(options_.names[p]);
  if (!failed.empty()) throw CollectiveError(fmt::format("rank(s) {} {}", list(failed), what_failed));
}

bool ShmCommunicator::all_arrived(uint64_t epoch) const {
  for (int p = 0; p < size_; ++p)
    if (std::atomic_ref<uint64_t>(layout_->ranks[p].arrived).load(std::memory_order_acquire) < epoch) return false;
  return true;
}

std::vector<int> ShmCommunicator::missing(uint64_t epoch) const {
  std::vector<int> out;
  for (int p = 0; p < size_; ++p)
    if (std::atomic_ref<uint64_t>(layout_->ranks[p].arrived).load(std::memory_order_acquire) < epoch)
      out.push_back(options_.names[p]);
  return out;
}

std::vector<int> ShmCommunicator::exited() const {
  std::vector<int> out;
  for (int p = 0; p < static_cast<int>(peer_pidfds_.size()); ++p) {
    if (peer_pidfds_[p] < 0) continue;
    pollfd pfd{peer_pidfds_[p], POLLIN, 0};
    if (poll(&pfd, 1, 0) > 0) out.push_back(p);
  }
  return out;
}

void ShmCommunicator::wait_slowly(uint64_t epoch) {
  const auto start = Clock::now();
  const auto deadline = start + options_.timeout;
  WakeState& w = *layout_->wake;
  while (!all_arrived(epoch)) {
    const auto now = Clock::now();
    if (now - start < kYieldFor) {
      sched_yield();
      continue;
    }
    std::vector<int> gone;
    for (int p : exited())
      if (std::atomic_ref<uint64_t>(layout_->ranks[p].arrived).load(std::memory_order_acquire) < epoch)
        gone.push_back(options_.names[p]);
    if (!gone.empty()) fail(fmt::format("the process of rank {} exited", list(gone)));
    if (now > deadline)
      fail(fmt::format("rank(s) {} did not arrive within {} s", list(missing(epoch)), options_.timeout.count() / 1000.0));
    std::atomic_ref<uint32_t>(w.sleepers).fetch_add(1, std::memory_order_seq_cst);
    const uint32_t seen = std::atomic_ref<uint32_t>(w.wake).load(std::memory_order_seq_cst);
    if (!all_arrived(epoch)) {
      timespec sleep{0, kSleepNanos};
      syscall(SYS_futex, &w.wake, FUTEX_WAIT, seen, &sleep, nullptr, 0);
    }
    std::atomic_ref<uint32_t>(w.sleepers).fetch_sub(1, std::memory_order_seq_cst);
  }
}

void ShmCommunicator::fail(const std::string& why) {
  const std::string diagnosis = diagnose_ ? "; " + diagnose_() : std::string();
  std::string operation = operation_.name;
  if (operation_.count > 0) operation += fmt::format(" of {} floats", operation_.count);
  if (operation_.root >= 0) operation += fmt::format(" from rank {}", options_.names.at(operation_.root));
  broken_ = fmt::format("shared-memory {} failed on rank {} of {}: {}{}", operation, options_.names[rank_], size_, why,
                        diagnosis);
  throw CollectiveError(broken_);
}

void ShmCommunicator::begin(const char* what, size_t count) {
  check_usable();
  operation_ = {what, count, -1};
}

void ShmCommunicator::check_usable() const {
  if (!broken_.empty()) throw CollectiveError(fmt::format("an earlier collective failed: {}", broken_));
}

void ShmCommunicator::allreduce(float* data, size_t count, ReduceOp op) {
  check_usable();
  if (count == 0 || size_ == 1) return;
  operation_ = {"allreduce", count, -1};
  if (count * sizeof(float) <= kSmallAllreduceBytes && count <= slot_floats_) {
    allreduce_small(data, count);
  } else {
    allreduce_chunked(data, count);
  }
  if (op == ReduceOp::kAvg) Floats(data, static_cast<Eigen::Index>(count)) *= 1.0f / static_cast<float>(size_);
}

void ShmCommunicator::allreduce_small(float* data, size_t count) {
  std::memcpy(slot(next_half(), rank_), data, count * sizeof(float));
  step();
  const auto n = static_cast<Eigen::Index>(count);
  const int h = this_half();
  Floats out(data, n);
  out = ConstFloats(slot(h, 0), n) + ConstFloats(slot(h, 1), n);
  for (int p = 2; p < size_; ++p) out += ConstFloats(slot(h, p), n);
}

// Sums `length` elements over the ranks, in rank order, into `out` (in this rank's slot of the
// next half) and `local`; this rank's own values come from `local`, the others' from their slots
// of this half at `offset` (the elements' place in the chunk).
void ShmCommunicator::reduce_share(float* local, float* out, size_t offset, size_t length) const {
  const int h = this_half();
  // Block by block, so the copy back to `local` reads what the sum just wrote from cache.
  for (size_t b = 0; b < length; b += kBlockFloats) {
    const auto n = static_cast<Eigen::Index>(std::min(kBlockFloats, length - b));
    auto input = [&](int p) { return ConstFloats(p == rank_ ? local + b : slot(h, p) + offset + b, n); };
    Floats result(out + b, n);
    result = input(0) + input(1);
    for (int p = 2; p < size_; ++p) result += input(p);
    std::memcpy(local + b, out + b, static_cast<size_t>(n) * sizeof(float));
  }
}

void ShmCommunicator::allreduce_chunked(float* data, size_t count) {
  const size_t chunks = (count + slot_floats_ - 1) / slot_floats_;
  const size_t chunk = (count + chunks - 1) / chunks;
  const size_t share = round_up((chunk + size_ - 1) / size_, kAlign);
  struct Range {
    size_t chunk_start, begin, end;
  };
  auto range = [&](size_t k, int j) {
    const size_t c0 = k * chunk, c1 = std::min(count, c0 + chunk);
    return Range{c0, std::min(c1, c0 + j * share), std::min(c1, c0 + (j + 1) * share)};
  };
  for (size_t s = 0; s <= chunks; ++s) {
    if (s < chunks) {
      float* mine = slot(next_half(), rank_);
      for (int j = 0; j < size_; ++j) {
        const Range r = range(s, j);
        if (j != rank_ && r.end > r.begin)
          std::memcpy(mine + (r.begin - r.chunk_start), data + r.begin, (r.end - r.begin) * sizeof(float));
      }
    }
    step();
    if (s >= 1) {
      for (int p = 0; p < size_; ++p) {
        const Range r = range(s - 1, p);
        if (p != rank_ && r.end > r.begin)
          std::memcpy(data + r.begin, slot(this_half(), p) + (r.begin - r.chunk_start), (r.end - r.begin) * sizeof(float));
      }
    }
    if (s < chunks) {
      const Range r = range(s, rank_);
      if (r.end > r.begin) {
        const size_t offset = r.begin - r.chunk_start;
        reduce_share(data + r.begin, slot(next_half(), rank_) + offset, offset, r.end - r.begin);
      }
    }
  }
}

void ShmCommunicator::broadcast(float* data, size_t count, int root) {
  check_usable();
  if (count == 0 || size_ == 1) return;
  if (root < 0 || root >= size_)
    throw CollectiveError(fmt::format("shared-memory broadcast: root {} is not a rank of 0..{}", root, size_ - 1));
  operation_ = {"broadcast", count, root};
  for (size_t begin = 0; begin < count; begin += slot_floats_) {
    const size_t n = std::min(slot_floats_, count - begin);
    if (rank_ == root) std::memcpy(slot(next_half(), root), data + begin, n * sizeof(float));
    step();
    if (rank_ != root) std::memcpy(data + begin, slot(this_half(), root), n * sizeof(float));
  }
}

void ShmCommunicator::allgather(const float* input, float* output, size_t count) {
  check_usable();
  if (count == 0) return;
  if (size_ == 1) {
    std::memcpy(output, input, count * sizeof(float));
    return;
  }
  operation_ = {"allgather", count, -1};
  for (size_t begin = 0; begin < count; begin += slot_floats_) {
    const size_t n = std::min(slot_floats_, count - begin);
    std::memcpy(slot(next_half(), rank_), input + begin, n * sizeof(float));
    step();
    for (int p = 0; p < size_; ++p)
      std::memcpy(output + p * count + begin, slot(this_half(), p), n * sizeof(float));
  }
}

std::unique_ptr<ReduceBuffer> ShmCommunicator::reduce_buffer(size_t count) {
  check_usable();
  if (size_ == 1) return nullptr;
  operation_ = {"bucket set-up", count, -1};
  const size_t number = reduce_buffers_++;
  const size_t bytes = std::max<size_t>(count, 1) * sizeof(float);
  auto name = [&](int r) { return fmt::format("{}-b{}-r{}", segment_->name(), number, r); };
  std::vector<std::unique_ptr<ShmSegment>> segments(static_cast<size_t>(size_));
  std::string why;
  try {
    segments[rank_] = ShmSegment::create(name(rank_), bytes);
  } catch (const CollectiveError& e) {
    why = e.what();
  }
  // This rank's name goes on every way out: once all have mapped it, or when the set-up fails.
  struct UnlinkOwn {
    ShmSegment* own;
    ~UnlinkOwn() {
      if (own) own->unlink();
    }
  } unlink_own{segments[rank_].get()};
  agree(why, "could not make a shared-memory bucket");
  try {
    for (int p = 0; p < size_; ++p)
      if (p != rank_) segments[p] = ShmSegment::open(name(p), bytes);
  } catch (const CollectiveError& e) {
    why = e.what();
  }
  agree(why, "could not map the node's shared-memory buckets");
  return std::make_unique<ShmReduceBuffer>(static_cast<ShmLockstep&>(*this), count, std::move(segments));
}

void ShmCommunicator::barrier() {
  check_usable();
  if (size_ == 1) return;
  operation_ = {"barrier", 0, -1};
  step();
}

}  // namespace paddle::collective
