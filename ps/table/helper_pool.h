#pragma once
// HelperPool: a few threads that help whoever calls run() with the parts of one job, so that a
// parameter server spreads a big sparse batch's shards (ps/table/sparse_table.h) over the machine's
// cores while one connection's requests are still answered one at a time.
//
// The caller works on its own job too, taking parts from the same counter as its helpers: a job
// whose helpers are all busy with another caller's job is done by the caller alone, never queued
// behind it. Several callers may run jobs at once; a free helper joins the oldest job with parts
// left.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace paddle::ps {

class HelperPool {
 public:
  explicit HelperPool(size_t helpers);
  ~HelperPool();  // joins the helpers
  HelperPool(const HelperPool&) = delete;
  HelperPool& operator=(const HelperPool&) = delete;

  size_t helpers() const { return threads_.size(); }
  // Calls part(i) once for every i in [0, parts), here and on free helpers, and returns when
  // every call has returned; then rethrows the first exception a part threw, if any.
  void run(size_t parts, const std::function<void(size_t)>& part);

 private:
  struct Job {
    size_t parts;
    const std::function<void(size_t)>* part;
    std::atomic<size_t> next{0};
    size_t finished = 0;  // the rest under mutex_
    size_t helping = 0;
    std::exception_ptr error;
  };
  void work_on(Job& job);
  void help();

  std::mutex mutex_;
  std::condition_variable work_, done_;
  std::deque<Job*> jobs_;  // jobs that may have parts left
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace paddle::ps
