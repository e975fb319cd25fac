#include "common/background_thread.h"

#include <pthread.h>

#include <stdexcept>
#include <utility>

namespace paddle::common {

void BackgroundThread::start(std::string name, std::function<void(std::stop_token)> body, std::function<void()> wake) {
  if (thread_.joinable() || stopping_.stop_possible())
    throw std::logic_error("BackgroundThread::start: the thread " + name + " was started already");
  wake_ = std::move(wake);
  stopping_ = std::stop_source();
  thread_ = std::thread([name = std::move(name), body = std::move(body), token = stopping_.get_token()] {
    pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
    body(token);
  });
}

void BackgroundThread::stop() {
  if (!thread_.joinable()) return;
  stopping_.request_stop();
  if (wake_) wake_();
  thread_.join();
}

}  // namespace paddle::common
