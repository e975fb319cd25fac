#pragma once
// StopSignals: SIGINT and SIGTERM taken by a thread of their own rather than a handler, so that
// whatever the launcher is doing when one comes, it learns of it at once:
//
//   - the first signal requests the stop of stop_token(). Every wait of the launcher watches
//     that token (the rendezvous, the wait for the master, a generation's verdict, the master's
//     wait for the other nodes to finish, the job page's linger) and ends within a bound by
//     throwing Stopped, which names what it was waiting for;
//   - every signal goes to the subscribers: the supervisor stops its processes on the first
//     (SIGTERM, SIGKILL after the grace period) and kills them at once on the second.
//
// One per launcher, made in main while the process has a single thread: the constructor blocks
// the two signals in the calling thread, so every thread made afterwards inherits the mask and
// only this object's thread receives them. Child processes unblock them between fork and exec
// (child_process.cc). They stay blocked after the destructor: one arriving then, while the
// launcher returns its exit status, is not allowed to replace that status with death by signal.

#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

#include "common/background_thread.h"
#include "common/error.h"

namespace paddle::launcher {

// The launcher was stopped by a signal while it waited; exits 128 + the signal (130, 143), as a
// stopped job does.
class Stopped : public common::Error {
 public:
  // "received SIGTERM while waiting for 1 of 2 nodes ...; stopped, nothing was left running"
  Stopped(int signal, const std::string& waiting_for);
  int signal() const { return signal_; }

 private:
  int signal_;
};

// "SIGINT", "SIGTERM", else "signal N".
std::string stop_signal_name(int signal);

class StopSignals {
 public:
  using Handler = std::function<void(int signal)>;

  // Ends a subscription when it goes: no call of its handler is in flight afterwards.
  class Subscription {
   public:
    Subscription() = default;
    Subscription(StopSignals* owner, int id) : owner_(owner), id_(id) {}
    Subscription(Subscription&& other) noexcept { *this = std::move(other); }
    Subscription& operator=(Subscription&& other) noexcept;
    ~Subscription() { reset(); }
    void reset();

   private:
    StopSignals* owner_ = nullptr;
    int id_ = 0;
  };

  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Stopped once the first signal has come.
  std::stop_token stop_token() const { return stop_.get_token(); }
  // The first signal received; 0 before one came.
  int first() const;
  // Throws Stopped naming `waiting_for` ("waiting for ...") once a signal has come.
  void throw_if_stopped(const std::string& waiting_for) const;

  // `handler` is called on the signals' thread for every signal from now on, until the
  // subscription ends, and at once, on the caller's, with the first signal if one came before;
  // it must not subscribe, unsubscribe or ask first().
  [[nodiscard]] Subscription subscribe(Handler handler);

  // Acts on `signal` as if it had come (the unit tests of the waits).
  void deliver(int signal);

 private:
  void receive(const std::stop_token& stop);  // the thread: signals until the destructor's wake
  void unsubscribe(int id);

  int signal_fd_ = -1;
  int wake_fd_ = -1;
  std::stop_source stop_;
  mutable std::mutex mutex_;
  int first_ = 0;
  int next_id_ = 1;
  std::vector<std::pair<int, Handler>> handlers_;
  common::BackgroundThread thread_;
};

}  // namespace paddle::launcher
