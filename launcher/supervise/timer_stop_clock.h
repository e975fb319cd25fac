#pragma once
// TimerStopClock: the supervisor's StopClock (stop_policy.h): the steady clock, and its alarm
// an io_context's timer, so that a stop's SIGKILL runs on the thread that watches the processes.

#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <utility>

#include "launcher/supervise/stop_policy.h"

namespace paddle::launcher {

class TimerStopClock : public StopClock {
 public:
  explicit TimerStopClock(boost::asio::steady_timer& timer) : timer_(timer) {}

  TimePoint now() const override { return std::chrono::steady_clock::now(); }
  void set_alarm(TimePoint when, std::function<void()> ring) override {
    timer_.expires_at(when);  // a pending alarm's wait ends with operation_aborted
    timer_.async_wait([ring = std::move(ring)](const boost::system::error_code& ec) {
      if (!ec) ring();
    });
  }
  void cancel_alarm() override { timer_.cancel(); }

 private:
  boost::asio::steady_timer& timer_;
};

}  // namespace paddle::launcher
