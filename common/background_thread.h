#pragma once
// BackgroundThread: the one way a part of this project runs work beside its caller (a
// communicator sending gradients, a loader preparing batches, a server's event loop, the
// launcher's watch of its peers): a named thread that its owner starts, asks to stop, and joins,
// never left running or detached.
//
//   start(name, body, wake)   runs body(stop_token) on a thread named `name` (top -H shows it;
//                             Linux keeps 15 characters)
//   stop()                    requests the stop, calls `wake` to end whatever the body waits in,
//                             and joins; again, or from the destructor, it does nothing more
//
// The body waits on its owner's condition variable with `token.stop_requested()` in the
// predicate, and `wake` notifies that variable while holding the owner's mutex: the stop is
// requested before the mutex is taken, so a body between its check and its wait cannot miss it.
// A body that runs an io_context has `wake` stop the io_context instead.

#include <functional>
#include <stop_token>
#include <string>
#include <thread>

namespace paddle::common {

class BackgroundThread {
 public:
  BackgroundThread() = default;
  ~BackgroundThread() { stop(); }
  BackgroundThread(const BackgroundThread&) = delete;
  BackgroundThread& operator=(const BackgroundThread&) = delete;

  // Once per object, before stop().
  void start(std::string name, std::function<void(std::stop_token)> body, std::function<void()> wake = {});
  void stop();

  // Whether a stop was requested (it stays requested after the join).
  bool stop_requested() const { return stopping_.stop_requested(); }
  // Whether the thread was started and not yet joined.
  bool running() const { return thread_.joinable(); }

 private:
  std::stop_source stopping_{std::nostopstate};
  std::function<void()> wake_;
  std::thread thread_;
};

}  // namespace paddle::common
