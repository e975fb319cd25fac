#include <doctest/doctest.h>

#include <functional>
#include <future>
#include <random>

#include "collective/gloo_communicator.h"
#include "collective/gloo_store.h"
#include "store/rendezvous_store.h"
#include "collective/shm_communicator.h"
#include "store/kv_store_server.h"
#include "runtime/distributed/data_parallel.h"
#include "runtime/nn/linear.h"
#include "runtime/nn/sequential.h"

using namespace paddle::runtime;
using namespace paddle::collective;
using namespace std::chrono_literals;

namespace {

// Two linear layers, the same weights in every model built so.
void build(Sequential& net) {
  std::mt19937 rng(0);
  net.add(std::make_unique<Linear>(4, 3, rng, "fc1")).add(std::make_unique<Linear>(3, 2, rng, "fc2"));
}

// Rows `first`.. of a fixed batch of 4 samples.
Tensor inputs(int first, int rows) {
  std::vector<float> v;
  for (int i = first; i < first + rows; ++i)
    for (int j = 0; j < 4; ++j) v.push_back(0.25f * static_cast<float>(i + 1) - 0.5f * static_cast<float>(j));
  return Tensor::from_values({rows, 4}, v);
}

// The gradients of mean(0.5 * y^2) over the rows of X (averaged over the ranks by PARALLEL),
// every parameter's flattened in order.
std::vector<float> gradients(Sequential& net, DataParallel* parallel, const Tensor& x) {
  net.zero_grad();
  Tensor y = net.forward(x, true);
  std::vector<float> dy = y.to_vector();
  for (float& d : dy) d /= static_cast<float>(x.shape[0]);
  net.backward(Tensor::from_values(y.shape, dy));
  if (parallel) parallel->finish_step();
  std::vector<float> all;
  for (Parameter* p : net.parameters()) {
    auto g = p->grad.to_vector();
    all.insert(all.end(), g.begin(), g.end());
  }
  return all;
}

// A ShmCommunicator that cannot make buckets, as with a /dev/shm too small for them.
class NoBuckets : public Communicator {
 public:
  explicit NoBuckets(std::unique_ptr<Communicator> inner) : inner_(std::move(inner)) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string backend() const override { return inner_->backend(); }
  void allreduce(float* data, size_t count, ReduceOp op) override { inner_->allreduce(data, count, op); }
  void broadcast(float* data, size_t count, int root) override { inner_->broadcast(data, count, root); }
  void allgather(const float* input, float* output, size_t count) override { inner_->allgather(input, output, count); }
  void barrier() override { inner_->barrier(); }
  std::unique_ptr<ReduceBuffer> reduce_buffer(size_t) override { throw CollectiveError("no room in /dev/shm"); }

 private:
  std::unique_ptr<Communicator> inner_;
};

// The gradients of 2 ranks of 2 samples each, after 3 steps, on communicators `make` gives;
// `shared`: whether every bucket is to be a shared one.
template <class Make>
std::vector<std::vector<float>> two_rank_gradients(Make make, bool shared,
                                                   const std::function<void(Sequential&)>& after_start = {}) {
  // Communicators outlive both ranks' work: a rank closing its connections while the other still
  // reads its last allreduce would fail that one.
  struct Rank {
    std::vector<float> gradients;
    std::unique_ptr<paddle::store::RendezvousStore> client;
    std::unique_ptr<GlooStore> store;
    std::unique_ptr<Communicator> comm;
  };
  paddle::store::KvStoreServer server("127.0.0.1", 0);
  std::vector<std::future<Rank>> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.push_back(std::async(std::launch::async, [&, r] {
      Rank rank;
      rank.client = std::make_unique<paddle::store::RendezvousStore>("127.0.0.1", server.port(), 10s);
      rank.store = std::make_unique<GlooStore>(*rank.client);
      rank.comm = make(r, *rank.store);
      Sequential net;
      build(net);
      DataParallel parallel(net, *rank.comm, 8 * sizeof(float));  // a bucket per layer or less
      CHECK(parallel.bucket_count() > 1);
      CHECK(parallel.shared_bucket_count() == (shared ? parallel.bucket_count() : 0));
      parallel.broadcast_parameters();
      if (after_start) after_start(net);
      for (int step = 0; step < 3; ++step) rank.gradients = gradients(net, &parallel, inputs(2 * r, 2));
      return rank;
    }));
  std::vector<Rank> done;
  for (auto& f : ranks) done.push_back(f.get());
  std::vector<std::vector<float>> out;
  for (auto& rank : done) out.push_back(rank.gradients);
  return out;
}

}  // namespace

TEST_CASE("data parallelism: 2 ranks of 2 samples average to the gradients of 1 rank of 4, in several buckets") {
  Sequential local;
  build(local);
  const auto expected = gradients(local, nullptr, inputs(0, 4));
  ShmOptions shm;
  shm.timeout = 10s;
  const auto gloo = two_rank_gradients([](int r, GlooStore& store) -> std::unique_ptr<Communicator> {
    return std::make_unique<GlooCommunicator>(r, 2, store, "127.0.0.1", 10s);
  }, false);
  // On one node the buckets are shared memory, reduced where they lie; without room for them,
  // private buckets through the communicator.
  const auto shared = two_rank_gradients([&](int r, GlooStore& store) -> std::unique_ptr<Communicator> {
    return std::make_unique<ShmCommunicator>(r, 2, store, shm);
  }, true);
  const auto fallback = two_rank_gradients([&](int r, GlooStore& store) -> std::unique_ptr<Communicator> {
    return std::make_unique<NoBuckets>(std::make_unique<ShmCommunicator>(r, 2, store, shm));
  }, false);
  for (const auto& got : {gloo[0], gloo[1], shared[0], shared[1], fallback[0], fallback[1]}) {
    REQUIRE(got.size() == expected.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(expected[i]).epsilon(1e-5));
  }
  CHECK(shared[0] == shared[1]);  // bit-identical on every rank
  CHECK(shared[0] == fallback[0]);  // the same sums either way
}

TEST_CASE("on the CPU each gradient lives in its bucket, and one replaced since still gets the average") {
  Sequential net;
  build(net);
  ShmOptions shm;
  shm.timeout = 10s;
  {
    paddle::store::KvStoreServer server("127.0.0.1", 0);
    paddle::store::RendezvousStore client("127.0.0.1", server.port(), 10s);
    GlooStore store(client);
    ShmCommunicator comm(0, 1, store, shm);
    net.parameters()[0]->grad.values()[0] = 3.5f;
    DataParallel parallel(net, comm);  // one bucket: the gradients back to back, last layer first
    REQUIRE(parallel.bucket_count() == 1);
    auto params = net.parameters();
    for (size_t i = params.size() - 1; i > 0; --i)
      CHECK(std::as_const(params[i])->grad.ptr() + params[i]->grad.numel() == std::as_const(params[i - 1]->grad).ptr());
    CHECK(params[0]->grad.to_vector()[0] == 3.5f);  // moved there with its value
  }
  CHECK(net.parameters()[0]->grad.to_vector()[0] == 3.5f);  // and moved out again when the buckets went

  Sequential local;
  build(local);
  const auto expected = gradients(local, nullptr, inputs(0, 4));
  const auto replaced = two_rank_gradients([&](int r, GlooStore& store) -> std::unique_ptr<Communicator> {
    return std::make_unique<ShmCommunicator>(r, 2, store, shm);
  }, true, [](Sequential& model) {
    Parameter* p = model.parameters()[1];
    p->grad = Tensor(p->grad.shape);  // a tensor of its own, outside the bucket
  });
  for (const auto& got : replaced) {
    REQUIRE(got.size() == expected.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(expected[i]).epsilon(1e-5));
  }
}
