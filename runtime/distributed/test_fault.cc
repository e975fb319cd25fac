#include "runtime/distributed/test_fault.h"

#include <fmt/format.h>

#include <thread>

#include "common/error.h"
#include "common/parse.h"

namespace paddle::runtime {
namespace {

[[noreturn]] void hold_until_killed() {
  while (true) std::this_thread::sleep_for(std::chrono::hours(1));
}

// Skips the first allreduce once the page shows `after` steps done, then holds in the next call.
class SkippingCommunicator : public collective::Communicator {
  class Buffer : public collective::ReduceBuffer {
   public:
    Buffer(std::unique_ptr<ReduceBuffer> inner, SkippingCommunicator& owner) : inner_(std::move(inner)), owner_(owner) {}
    float* data() override { return inner_->data(); }
    size_t size() const override { return inner_->size(); }
    void allreduce(collective::ReduceOp op) override {
      if (!owner_.skip_now(true)) inner_->allreduce(op);
    }

   private:
    std::unique_ptr<ReduceBuffer> inner_;
    SkippingCommunicator& owner_;
  };

 public:
  SkippingCommunicator(std::unique_ptr<Communicator> inner, const common::ProgressPage& page, int64_t after)
      : inner_(std::move(inner)), page_(page), after_(after) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string backend() const override { return inner_->backend(); }
  bool accepts_device_memory() const override { return inner_->accepts_device_memory(); }

  void allreduce(float* data, size_t count, collective::ReduceOp op) override {
    if (skip_now(true)) return;
    inner_->allreduce(data, count, op);
  }
  void broadcast(float* data, size_t count, int root) override {
    skip_now(false);
    inner_->broadcast(data, count, root);
  }
  void allgather(const float* input, float* output, size_t count) override {
    skip_now(false);
    inner_->allgather(input, output, count);
  }
  void barrier() override {
    skip_now(false);
    inner_->barrier();
  }
  std::unique_ptr<collective::ReduceBuffer> reduce_buffer(size_t count) override {
    std::unique_ptr<collective::ReduceBuffer> inner = inner_->reduce_buffer(count);
    if (!inner) return nullptr;
    return std::make_unique<Buffer>(std::move(inner), *this);
  }

 private:
  // Whether to return from this allreduce without the others; holds forever once one was skipped.
  bool skip_now(bool is_allreduce) {
    if (skipped_) hold_until_killed();
    if (!is_allreduce || page_.steps() < after_) return false;
    skipped_ = true;
    return true;
  }

  std::unique_ptr<Communicator> inner_;
  const common::ProgressPage& page_;
  int64_t after_;
  bool skipped_ = false;
};

}  // namespace

TestFault TestFault::from_environment(const common::Environment& env, int rank) {
  const std::optional<std::string> value = common::get_env(env, "PADDLE_TEST_FAULT");
  TestFault fault;
  if (!value || value->empty()) return fault;
  std::vector<std::string> parts;
  for (size_t at = 0;;) {
    const size_t colon = value->find(':', at);
    parts.push_back(value->substr(at, colon - at));
    if (colon == std::string::npos) break;
    at = colon + 1;
  }
  const auto bad = [&](const std::string& why) {
    return common::ConfigError(fmt::format("PADDLE_TEST_FAULT={}: {} (KIND:RANK:STEP[:SECONDS], KIND one of "
                                           "stall_data_loading, skip_allreduce, slow_phases)",
                                           *value, why));
  };
  const bool slow = parts[0] == "slow_phases";
  if (parts.size() != (slow ? 4u : 3u)) throw bad(fmt::format("{} fields", parts.size()));
  const auto target = common::to_int(parts[1]);
  const auto after = common::to_int(parts[2]);
  if (!target || *target < -1) throw bad(fmt::format("rank {} is not a rank or -1", parts[1]));
  if (!after || *after < 0) throw bad(fmt::format("step {} is not a count of steps", parts[2]));
  if (parts[0] == "stall_data_loading") fault.kind_ = Kind::kStallDataLoading;
  else if (parts[0] == "skip_allreduce") fault.kind_ = Kind::kSkipAllreduce;
  else if (slow) fault.kind_ = Kind::kSlowPhases;
  else throw bad(fmt::format("{} is not a fault", parts[0]));
  if (slow) {
    const auto seconds = common::to_int(parts[3]);
    if (!seconds || *seconds < 0) throw bad(fmt::format("{} is not a number of seconds", parts[3]));
    fault.slow_ = std::chrono::seconds(*seconds);
  }
  fault.after_steps_ = *after;
  // Once: a restarted job (PADDLE_RESTART_COUNT > 0) runs clean, so that it can finish.
  if ((*target != -1 && *target != rank) || common::env_int(env, "PADDLE_RESTART_COUNT", 0) > 0) fault.kind_ = Kind::kNone;
  return fault;
}

void TestFault::in_data_loading(int64_t steps) const {
  if (kind_ == Kind::kStallDataLoading && steps >= after_steps_) hold_until_killed();
}

void TestFault::in_slow_phase(int64_t steps) const {
  if (kind_ != Kind::kSlowPhases || steps < after_steps_) return;
  // Computing, as a long evaluation does: CPU time, no marks.
  const auto until = std::chrono::steady_clock::now() + slow_;
  volatile uint64_t work = 0;
  while (std::chrono::steady_clock::now() < until)
    for (int i = 0; i < 100000; ++i) work = work + static_cast<uint64_t>(i);
}

std::unique_ptr<collective::Communicator> TestFault::wrap(std::unique_ptr<collective::Communicator> inner,
                                                          const common::ProgressPage& page) const {
  if (kind_ != Kind::kSkipAllreduce) return inner;
  return std::make_unique<SkippingCommunicator>(std::move(inner), page, after_steps_);
}

}  // namespace paddle::runtime
