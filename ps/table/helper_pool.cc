#include "ps/table/helper_pool.h"

#include <algorithm>

namespace paddle::ps {

HelperPool::HelperPool(size_t helpers) {
  for (size_t i = 0; i < helpers; ++i) threads_.emplace_back([this] { help(); });
}

HelperPool::~HelperPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_.notify_all();
  for (auto& t : threads_) t.join();
}

void HelperPool::work_on(Job& job) {
  for (size_t i; (i = job.next.fetch_add(1)) < job.parts;) {
    std::exception_ptr error;
    try {
      (*job.part)(i);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard lock(mutex_);
    if (error && !job.error) job.error = error;
    if (++job.finished == job.parts) done_.notify_all();
  }
}

void HelperPool::run(size_t parts, const std::function<void(size_t)>& part) {
  if (parts == 0) return;
  Job job{parts, &part, {0}, 0, 0, {}};
  if (!threads_.empty() && parts > 1) {
    {
      std::lock_guard lock(mutex_);
      jobs_.push_back(&job);
    }
    work_.notify_all();
  }
  work_on(job);
  std::unique_lock lock(mutex_);
  // No helper joins once the job is off the list; wait for those that did.
  if (auto it = std::find(jobs_.begin(), jobs_.end(), &job); it != jobs_.end()) jobs_.erase(it);
  done_.wait(lock, [&] { return job.finished == job.parts && job.helping == 0; });
  if (job.error) std::rethrow_exception(job.error);
}

void HelperPool::help() {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (stopping_) return;
    Job& job = *jobs_.front();
    if (job.next.load() >= job.parts) {  // every part taken: nothing left to help with
      jobs_.pop_front();
      continue;
    }
    ++job.helping;
    lock.unlock();
    work_on(job);
    lock.lock();
    if (--job.helping == 0) done_.notify_all();
  }
}

}  // namespace paddle::ps
