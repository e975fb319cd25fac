#include "runtime/train/workloads/worker_progress.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "common/checksum.h"
#include "ps/wire/coding.h"

namespace paddle::runtime {
namespace {

constexpr size_t kMarkBytes = 56;
constexpr uint32_t kMagic = 0x4d505750;  // "PWPM"

std::array<unsigned char, kMarkBytes> encode(const WorkerMark& m) {
  std::array<unsigned char, kMarkBytes> b{};
  ps::encode_fixed<uint32_t>(b.data(), kMagic);
  ps::encode_fixed<uint64_t>(b.data() + 8, static_cast<uint64_t>(m.round));
  ps::encode_fixed<uint64_t>(b.data() + 16, static_cast<uint64_t>(m.batch));
  ps::encode_fixed<uint64_t>(b.data() + 24, static_cast<uint64_t>(m.step));
  ps::encode_fixed<uint64_t>(b.data() + 32, m.barriers);
  ps::encode_fixed<uint32_t>(b.data() + 40, m.round_trained ? 1 : 0);
  ps::encode_fixed<uint32_t>(b.data() + 44, m.barrier_per_step ? 1 : 0);
  ps::encode_fixed<uint32_t>(b.data() + 48, (m.counted ? 1u : 0u) | (m.zeroed ? 2u : 0u) | (m.finished ? 4u : 0u));
  const uint32_t crc = common::crc32(std::string_view(reinterpret_cast<const char*>(b.data() + 8), kMarkBytes - 8));
  ps::encode_fixed<uint32_t>(b.data() + 4, crc);
  return b;
}

}  // namespace

std::optional<WorkerProgress> WorkerProgress::from_environment(const common::Environment& env) {
  const auto file = common::get_env(env, "PADDLE_PS_WORKER_PROGRESS");
  if (!file || file->empty()) return std::nullopt;
  const int64_t restarts = common::env_int(env, "PADDLE_PS_WORKER_RESTART_COUNT", 0);
  if (restarts < 0)
    throw common::ConfigError(fmt::format("PADDLE_PS_WORKER_RESTART_COUNT={} is negative", restarts));
  return std::optional<WorkerProgress>(std::in_place, *file, static_cast<int>(restarts));
}

WorkerProgress::WorkerProgress(std::filesystem::path file, int restarts) : file_(std::move(file)), restarts_(restarts) {
  fd_ = ::open(file_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw common::DataError(fmt::format("{}: cannot open the worker's progress (PADDLE_PS_WORKER_PROGRESS): {}",
                                        file_.string(), std::strerror(errno)));
}

WorkerProgress::~WorkerProgress() {
  if (fd_ >= 0) ::close(fd_);
}

WorkerProgress::WorkerProgress(WorkerProgress&& other) noexcept
    : file_(std::move(other.file_)), fd_(other.fd_), restarts_(other.restarts_) {
  other.fd_ = -1;
}

std::optional<WorkerMark> WorkerProgress::last() const {
  std::array<unsigned char, kMarkBytes> b{};
  if (::pread(fd_, b.data(), b.size(), 0) != static_cast<ssize_t>(b.size())) return std::nullopt;
  if (ps::decode_fixed<uint32_t>(b.data()) != kMagic) return std::nullopt;
  const uint32_t crc = common::crc32(std::string_view(reinterpret_cast<const char*>(b.data() + 8), kMarkBytes - 8));
  if (ps::decode_fixed<uint32_t>(b.data() + 4) != crc) return std::nullopt;
  WorkerMark m;
  m.round = static_cast<int64_t>(ps::decode_fixed<uint64_t>(b.data() + 8));
  m.batch = static_cast<int64_t>(ps::decode_fixed<uint64_t>(b.data() + 16));
  m.step = static_cast<int64_t>(ps::decode_fixed<uint64_t>(b.data() + 24));
  m.barriers = ps::decode_fixed<uint64_t>(b.data() + 32);
  m.round_trained = ps::decode_fixed<uint32_t>(b.data() + 40) != 0;
  m.barrier_per_step = ps::decode_fixed<uint32_t>(b.data() + 44) != 0;
  const uint32_t evaluation = ps::decode_fixed<uint32_t>(b.data() + 48);
  m.counted = (evaluation & 1u) != 0;
  m.zeroed = (evaluation & 2u) != 0;
  m.finished = (evaluation & 4u) != 0;
  return m;
}

void WorkerProgress::record(const WorkerMark& mark) {
  const auto bytes = encode(mark);
  if (::pwrite(fd_, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size()))
    throw common::DataError(fmt::format("{}: cannot record the worker's progress: {}", file_.string(),
                                        std::strerror(errno)));
}

std::optional<WorkerMark> resume_point(const std::optional<WorkerMark>& last, uint64_t barriers_completed,
                                       int64_t first_round) {
  if (!last) {
    if (barriers_completed == 0) return std::nullopt;
    if (barriers_completed == 1) {  // its dead self reached the first barrier, and died before its first mark
      WorkerMark start;
      start.round = first_round;
      start.barriers = 1;
      return start;
    }
    throw CannotRejoin(fmt::format("this worker left no progress mark, but the job has completed {} barrier(s) "
                                   "without it", barriers_completed));
  }
  if (barriers_completed == last->barriers) return last;
  if (last->round_trained && barriers_completed > last->barriers &&
      barriers_completed - last->barriers <= kMostBarriersAfterRound)
    return last;
  // Sync: the barrier of the step after the mark completed (with this worker's pushes) before
  // the mark could say so; the step is done, and the next is where to take up.
  if (barriers_completed == last->barriers + 1 && last->barrier_per_step && !last->round_trained) {
    WorkerMark next = *last;
    ++next.batch;
    ++next.step;
    next.barriers = barriers_completed;
    return next;
  }
  throw CannotRejoin(fmt::format(
      "this worker's last mark is pass {} batch {} after barrier {}, but the job has completed {} barrier(s): it "
      "died {}, where the other workers went on with its part",
      last->round, last->batch, last->barriers, barriers_completed,
      last->round_trained ? "past its pass's end" : "past a barrier its mark does not know"));
}

}  // namespace paddle::runtime
