#pragma once
// AsyncCommunicator: the asynchronous mode's sender. The trainer queues each step's gradients
// and goes on; a thread takes up to max_merge queued steps at a time, merges them (the mean of
// their dense gradients, and per sparse key the mean over the steps that touched it) and pushes
// the result with its own connections. A full queue blocks the trainer until there is room.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "common/background_thread.h"
#include "ps/key_index.h"
#include "ps/parameter_store.h"
#include "ps/table_spec.h"

namespace paddle::ps {

struct StepGradients {
  std::vector<float> dense;  // dense table 0, the whole vector
  struct Sparse {
    uint32_t table;
    std::vector<uint64_t> keys;
    std::vector<float> grads;  // a row of the table's dim per key
  };
  std::vector<Sparse> sparse;
};

class AsyncCommunicator {
 public:
  AsyncCommunicator(std::unique_ptr<ParameterStore> sender, TableSpecs tables, size_t queue_capacity, size_t max_merge);
  ~AsyncCommunicator();
  AsyncCommunicator(const AsyncCommunicator&) = delete;
  AsyncCommunicator& operator=(const AsyncCommunicator&) = delete;

  // Queues one step; blocks while the queue is full. Rethrows a failed send. Checks the step
  // against `tables` first, as ParameterStore's calls are (std::invalid_argument naming the table).
  void push(StepGradients step);
  // Waits until everything queued has been sent. Rethrows a failed send.
  void flush();
  uint64_t merged_sends() const { return sends_; }
  // The steps pushed so far whose sends the servers have answered: the steps a worker restarted
  // in place need not train again.
  uint64_t acknowledged_steps() {
    std::lock_guard lock(mutex_);
    return acknowledged_;
  }

 private:
  void run(const std::stop_token& stop);
  void rethrow_locked();

  std::unique_ptr<ParameterStore> sender_;
  TableSpecs tables_;
  size_t capacity_, max_merge_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<StepGradients> queue_;
  bool busy_ = false;
  std::exception_ptr error_;
  uint64_t sends_ = 0;
  uint64_t acknowledged_ = 0;
  // The sender thread's merge of one table's rows, kept from send to send.
  KeyIndex merged_keys_;
  std::vector<float> merged_rows_;
  std::vector<uint32_t> merged_counts_;
  common::BackgroundThread thread_;
};

}  // namespace paddle::ps
