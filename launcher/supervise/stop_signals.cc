#include "launcher/supervise/stop_signals.h"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fmt/format.h>
#include <utility>

namespace paddle::launcher {
namespace {

sigset_t stop_signal_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

std::string stop_signal_name(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return fmt::format("signal {}", signal);
}

Stopped::Stopped(int signal, const std::string& waiting_for)
    : common::Error(fmt::format("received {} while {}; stopped, nothing was left running", stop_signal_name(signal),
                                waiting_for),
                    128 + signal),
      signal_(signal) {}

StopSignals::Subscription& StopSignals::Subscription::operator=(Subscription&& other) noexcept {
  if (this != &other) {
    reset();
    owner_ = std::exchange(other.owner_, nullptr);
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

void StopSignals::Subscription::reset() {
  if (owner_ != nullptr) owner_->unsubscribe(id_);
  owner_ = nullptr;
}

StopSignals::StopSignals() {
  const sigset_t set = stop_signal_set();
  if (int error = pthread_sigmask(SIG_BLOCK, &set, nullptr); error != 0)
    throw common::Error(fmt::format("cannot block SIGINT and SIGTERM for the launcher's signal thread: {}", std::strerror(error)));
  signal_fd_ = ::signalfd(-1, &set, SFD_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC);
  if (signal_fd_ < 0 || wake_fd_ < 0) {
    const int error = errno;
    if (signal_fd_ >= 0) ::close(signal_fd_);
    if (wake_fd_ >= 0) ::close(wake_fd_);
    throw common::Error(fmt::format("cannot watch SIGINT and SIGTERM (signalfd/eventfd): {}", std::strerror(error)));
  }
  thread_.start("stop-signals", [this](std::stop_token stop) { receive(stop); }, [this] {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof one);
  });
}

StopSignals::~StopSignals() {
  thread_.stop();
  ::close(signal_fd_);
  ::close(wake_fd_);
}

int StopSignals::first() const {
  std::lock_guard lock(mutex_);
  return first_;
}

void StopSignals::throw_if_stopped(const std::string& waiting_for) const {
  if (const int signal = first()) throw Stopped(signal, waiting_for);
}

StopSignals::Subscription StopSignals::subscribe(Handler handler) {
  std::lock_guard lock(mutex_);
  const int id = next_id_++;
  if (first_ != 0) handler(first_);
  handlers_.emplace_back(id, std::move(handler));
  return Subscription(this, id);
}

void StopSignals::unsubscribe(int id) {
  std::lock_guard lock(mutex_);
  std::erase_if(handlers_, [id](const auto& entry) { return entry.first == id; });
}

void StopSignals::deliver(int signal) {
  bool first = false;
  {
    std::lock_guard lock(mutex_);
    first = first_ == 0;
    if (first) first_ = signal;
    for (const auto& [id, handler] : handlers_) handler(signal);
  }
  // Outside the lock: the token's callbacks (a store's waits ended) may ask first().
  if (first) stop_.request_stop();
}

void StopSignals::receive(const std::stop_token& stop) {
  while (!stop.stop_requested()) {
    pollfd fds[2] = {{signal_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) continue;  // EINTR: nothing else can fail here
    if (!(fds[0].revents & POLLIN)) continue;
    signalfd_siginfo info{};
    if (::read(signal_fd_, &info, sizeof info) != static_cast<ssize_t>(sizeof info)) continue;
    deliver(static_cast<int>(info.ssi_signo));
  }
}

}  // namespace paddle::launcher
