// The collective ops (manifests/collective.yaml) over Communicator::local_group's ranks on the
// CPU, one thread per rank: each collective's result on every rank, in place and out of place,
// and the construction checks of the `communicator` and `world_size` parameters.
#include <doctest/doctest.h>

#include <functional>
#include <thread>
#include <vector>

#include "tileops/communicator.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/collectives.hpp"
#include "tileops/ops/collective.hpp"

using namespace tileops;

namespace {

// Runs body(rank) on one thread per rank of a new local group of `size`, and rethrows the first
// failure of any rank on the calling thread.
void on_each_rank(int size, const std::function<void(const Communicator&)>& body) {
  const std::vector<std::shared_ptr<Communicator>> group = Communicator::local_group(size);
  std::vector<std::exception_ptr> failures(static_cast<std::size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      try {
        body(*group[static_cast<std::size_t>(r)]);
      } catch (...) {
        failures[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& f : failures) {
    if (f) std::rethrow_exception(f);
  }
}

// Rank r's input: element i is (r + 1) * (i + 1), exact in every dtype used here.
Tensor rank_input(int rank, const Shape& shape, DType dtype) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  std::vector<double> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(static_cast<double>((rank + 1) * (i + 1)));
  return Tensor::from_doubles(v, shape, dtype);
}

}  // namespace

TEST_CASE("AllReduce over a local group: every rank gets the sum (or max) of all ranks' tensors") {
  for (DType dtype : {DType::float32, DType::bfloat16, DType::float16, DType::int32, DType::int64}) {
    CAPTURE(dtype_name(dtype));
    on_each_rank(3, [&](const Communicator& comm) {
      AllReduceFwdOp sum(comm.key());
      AllReduceFwdOp max(comm.key(), "max");
      const Tensor x = rank_input(comm.rank(), {2, 5}, dtype);
      const Tensor s = sum(x);
      const Tensor m = max(x);
      for (std::int64_t i = 0; i < 10; ++i) {
        CHECK(s.get(i) == doctest::Approx(static_cast<double>((1 + 2 + 3) * (i + 1))));
        CHECK(m.get(i) == doctest::Approx(static_cast<double>(3 * (i + 1))));
        CHECK(x.get(i) == doctest::Approx(static_cast<double>((comm.rank() + 1) * (i + 1))));  // x untouched
      }
    });
  }
}

TEST_CASE("AllReduce with inplace writes the reduction into the input and returns it") {
  on_each_rank(4, [](const Communicator& comm) {
    AllReduceFwdOp op(comm.key(), "sum", true);
    const Tensor x = rank_input(comm.rank(), {7}, DType::float32);
    const Tensor y = op(x);
    CHECK(y.is_same(x));
    for (std::int64_t i = 0; i < 7; ++i) CHECK(x.get(i) == doctest::Approx(10.0 * static_cast<double>(i + 1)));
  });
}

TEST_CASE("AllGather stacks the ranks' tensors in rank order along the first axis") {
  on_each_rank(3, [](const Communicator& comm) {
    AllGatherFwdOp op(comm.key(), 3);
    const Tensor y = op(rank_input(comm.rank(), {2, 2}, DType::bfloat16));
    REQUIRE(y.shape() == Shape{6, 2});
    for (int r = 0; r < 3; ++r) {
      for (std::int64_t i = 0; i < 4; ++i) CHECK(y.get(r * 4 + i) == doctest::Approx(static_cast<double>((r + 1) * (i + 1))));
    }
  });
}

TEST_CASE("ReduceScatter gives rank r the reduction of every rank's block r") {
  on_each_rank(2, [](const Communicator& comm) {
    ReduceScatterFwdOp sum(comm.key(), 2);
    ReduceScatterFwdOp max(comm.key(), 2, "max");
    const Tensor x = rank_input(comm.rank(), {4, 3}, DType::float32);
    const Tensor s = sum(x);
    const Tensor m = max(x);
    REQUIRE(s.shape() == Shape{2, 3});
    for (std::int64_t i = 0; i < 6; ++i) {
      const double element = static_cast<double>(comm.rank() * 6 + i + 1);
      CHECK(s.get(i) == doctest::Approx(3.0 * element));
      CHECK(m.get(i) == doctest::Approx(2.0 * element));
    }
  });
}

TEST_CASE("The communicator 'self' is this rank alone: all reduce, gather and scatter copy") {
  const Tensor x = rank_input(0, {4, 2}, DType::float32);
  for (const Tensor& y : {AllReduceFwdOp()(x), AllGatherFwdOp()(x), ReduceScatterFwdOp()(x)}) {
    REQUIRE(y.shape() == x.shape());
    CHECK_FALSE(y.is_same(x));
    for (std::int64_t i = 0; i < 8; ++i) CHECK(y.get(i) == x.get(i));
  }
}

TEST_CASE("Construction refuses a key that names no live communicator, listing the live ones") {
  const auto group = Communicator::local_group(2);
  CHECK_THROWS_WITH_AS(AllReduceFwdOp("nccl:999999"),
                       doctest::Contains("no live communicator has the key 'nccl:999999'; the live ones are"),
                       ValueError);
  try {
    AllReduceFwdOp op("local:0");
    FAIL("expected ValueError");
  } catch (const ValueError& e) {
    CHECK(std::string(e.what()).find(group[1]->key()) != std::string::npos);
    CHECK(std::string(e.what()).find("'self' is this rank alone") != std::string::npos);
  }
}

TEST_CASE("Construction refuses a world_size other than the communicator's size") {
  const auto group = Communicator::local_group(2);
  CHECK_THROWS_WITH_AS(AllGatherFwdOp(group[0]->key(), 4),
                       doctest::Contains(("world_size is 4, but communicator " + group[0]->key() + " has 2 ranks").c_str()),
                       ValueError);
  CHECK_THROWS_WITH_AS(ReduceScatterFwdOp("self", 2), doctest::Contains("'self' is this rank alone (1 rank)"),
                       ValueError);
  CHECK_THROWS_WITH_AS(AllGatherFwdOp(group[0]->key(), 0), doctest::Contains("world_size must be positive"), ValueError);
  CHECK_THROWS_WITH_AS(AllReduceFwdOp("self", "min"), doctest::Contains("reduce must be 'sum' or 'max'"), ValueError);
}

TEST_CASE("ReduceScatter refuses a first axis that the world size does not divide") {
  on_each_rank(2, [](const Communicator& comm) {
    ReduceScatterFwdOp op(comm.key(), 2);
    CHECK_THROWS_WITH_AS(op(rank_input(comm.rank(), {3, 2}, DType::float32)),
                         doctest::Contains("the first axis N must be a multiple of world_size"), ValueError);
  });
}

TEST_CASE("A call after its communicator was destroyed is refused, naming the op") {
  std::vector<std::shared_ptr<Communicator>> group = Communicator::local_group(1);
  AllReduceFwdOp op(group[0]->key());
  group.clear();
  CHECK_THROWS_WITH_AS(op(rank_input(0, {3}, DType::float32)),
                       doctest::Contains("AllReduceFwdOp: communicator"), ValueError);
  CHECK_THROWS_WITH_AS(op(rank_input(0, {3}, DType::float32)), doctest::Contains("was destroyed"), ValueError);
}

TEST_CASE("A communicator on one device refuses a call on another, naming both") {
  const auto group = Communicator::local_group(1);
  CHECK_THROWS_WITH_AS(communicator_for_call(group[0]->id(), Device::parse("cuda:1"), "AllReduceFwdOp"),
                       doctest::Contains(("AllReduceFwdOp: communicator " + group[0]->key() +
                                          " is on cpu, but the call is on cuda:1")
                                             .c_str()),
                       ValueError);
  CHECK(communicator_for_call(0, Device::parse("cuda:1"), "AllReduceFwdOp") == nullptr);
}

TEST_CASE("Communicator keys are unique and the group's ranks know their place") {
  const auto a = Communicator::local_group(3);
  const auto b = Communicator::local_group(1);
  CHECK(a[2]->rank() == 2);
  CHECK(a[2]->size() == 3);
  CHECK(a[2]->provider() == "local");
  CHECK(a[2]->device() == Device::cpu());
  CHECK(a[0]->key() != a[1]->key());
  CHECK(Communicator::find(b[0]->key()).get() == b[0].get());
  CHECK_THROWS_WITH_AS(Communicator::local_group(0), doctest::Contains("size must be from 1 to 256, not 0"), ValueError);
}

TEST_CASE("join checks the size, the rank and the device before asking a provider") {
  const CommunicatorId id{};
  CHECK_THROWS_WITH_AS(Communicator::join(Device::parse("cuda:0"), id, 0, 0), doctest::Contains("size must be from 1"),
                       ValueError);
  CHECK_THROWS_WITH_AS(Communicator::join(Device::parse("cuda:0"), id, 2, 2),
                       doctest::Contains("rank must be from 0 to size - 1 = 1, not 2"), ValueError);
  CHECK_THROWS_WITH_AS(Communicator::join(Device::cpu(), id, 1, 0), doctest::Contains("Communicator::local_group"),
                       ValueError);
  CHECK_THROWS_WITH_AS(Communicator::new_id(DeviceType::cpu()),
                       doctest::Contains("no collective provider is registered for device type 'cpu'"),
                       OpNotAvailableError);
}
