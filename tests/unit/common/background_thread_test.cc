#include "common/background_thread.h"

#include <doctest/doctest.h>
#include <pthread.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

using paddle::common::BackgroundThread;
using namespace std::chrono_literals;

TEST_CASE("background thread: stop wakes a body waiting on its owner's condition, joins it, and stays stopped") {
  std::mutex mutex;
  std::condition_variable changed;
  bool body_ended = false;
  std::string name;
  BackgroundThread thread;
  thread.start(
      "a-long-thread-name",
      [&](std::stop_token stop) {
        char buffer[16] = {};
        pthread_getname_np(pthread_self(), buffer, sizeof(buffer));
        std::unique_lock lock(mutex);
        name = buffer;
        // Without the wake this would wait an hour: the stop must reach it at once.
        changed.wait_for(lock, 1h, [&] { return stop.stop_requested(); });
        body_ended = true;
      },
      [&] {
        std::lock_guard lock(mutex);
        changed.notify_all();
      });
  CHECK(thread.running());
  CHECK_FALSE(thread.stop_requested());
  const auto start = std::chrono::steady_clock::now();
  thread.stop();
  CHECK(std::chrono::steady_clock::now() - start < 10s);
  CHECK(body_ended);  // joined: the body's last write is visible
  CHECK(name == "a-long-thread-n");  // Linux keeps 15 characters
  CHECK_FALSE(thread.running());
  CHECK(thread.stop_requested());
  thread.stop();  // again: nothing more
  CHECK_THROWS_AS(thread.start("again", [](std::stop_token) {}), std::logic_error);
}

TEST_CASE("background thread: the destructor stops and joins; one never started stops as a no-op") {
  bool ran = false;
  {
    BackgroundThread thread;
    thread.start("short", [&](std::stop_token stop) {
      while (!stop.stop_requested()) std::this_thread::sleep_for(1ms);
      ran = true;
    });
  }
  CHECK(ran);
  BackgroundThread idle;
  CHECK_FALSE(idle.running());
  idle.stop();
  CHECK_FALSE(idle.stop_requested());
}
