// The collective ops on cuda through the nccl plugin with one rank (the machine has one GPU):
// a joined communicator and "self", every collective and dtype, in place, a device graph's
// replay, and a communicator of another device refused by name. Skipped without a GPU or
// without NCCL (the line says which).
#include <doctest/doctest.h>

#include <iostream>
#include <vector>

#include "support/gpu.hpp"
#include "support/run_command.hpp"
#include "tileops/communicator.hpp"
#include "tileops/device_graph.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/collectives.hpp"
#include "tileops/ops/collective.hpp"

using namespace tileops;
using testing::cuda_or_skip;

namespace {

const Device kGpu = Device::parse("cuda:0");

// The communicator of rank 0 of 1 on cuda:0, or nullptr after printing why it cannot be made.
std::shared_ptr<Communicator> one_rank_or_skip() {
  if (cuda_or_skip() == nullptr) return nullptr;
  const std::shared_ptr<CollectiveProvider> nccl = find_collective_provider(kGpu.type());
  REQUIRE_MESSAGE(nccl != nullptr, "the nccl plugin did not load");
  if (const auto why = nccl->unavailable()) {
    std::cout << "SKIPPED (NCCL): " << *why << "\n";
    return nullptr;
  }
  return Communicator::join(kGpu, Communicator::new_id(kGpu.type()), 1, 0);
}

Tensor counting(const Shape& shape, DType dtype, double scale) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  std::vector<double> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(scale * static_cast<double>(i % 97 + 1));
  return Tensor::from_doubles(v, shape, dtype).to(kGpu);
}

void check_equal(const Tensor& got, const Tensor& expected) {
  REQUIRE(got.shape() == expected.shape());
  const Tensor g = got.to(Device::cpu());
  const Tensor e = expected.to(Device::cpu());
  for (std::int64_t i = 0; i < g.numel(); ++i) REQUIRE(g.get(i) == e.get(i));
}

}  // namespace

TEST_CASE("GPU: with one rank, all reduce, gather and scatter give the input back, through a joined communicator and self") {
  const std::shared_ptr<Communicator> comm = one_rank_or_skip();
  if (!comm) return;
  CHECK(comm->provider() == "nccl");
  for (const std::string& key : {comm->key(), std::string(Communicator::kSelf)}) {
    for (DType dtype : {DType::float32, DType::bfloat16, DType::float16, DType::int32, DType::int64}) {
      CAPTURE(key);
      CAPTURE(dtype_name(dtype));
      const Tensor x = counting({33, 65}, dtype, 1.0);
      check_equal(AllReduceFwdOp(key)(x), x);
      check_equal(AllReduceFwdOp(key, "max")(x), x);
      check_equal(AllGatherFwdOp(key, 1)(x), x);
      check_equal(ReduceScatterFwdOp(key, 1)(x), x);
      AllReduceFwdOp all_reduce(key);
      all_reduce(x);
      REQUIRE(all_reduce.last_call()->kernels.size() == 1);
      CHECK(all_reduce.last_call()->kernels[0] == "nccl_all_reduce");
    }
  }
}

TEST_CASE("GPU: an in-place all reduce returns its input, and replays from a device graph") {
  const std::shared_ptr<Communicator> comm = one_rank_or_skip();
  if (!comm) return;
  AllReduceFwdOp in_place(comm->key(), "sum", true);
  const Tensor x = counting({1024, 512}, DType::bfloat16, 1.0);
  CHECK(in_place(x).is_same(x));
  AllGatherFwdOp gather(comm->key(), 1);
  const Tensor input = counting({256, 64}, DType::float32, 1.0);
  gather(input);  // warm: the kernel is built before recording
  DeviceGraph recorded = DeviceGraph::capture(kGpu, [&] { return std::vector<Tensor>{gather(input)}; });
  const Tensor next = counting({256, 64}, DType::float32, 3.0);
  input.copy_from(next);
  recorded.replay();
  check_equal(recorded.outputs()[0], next);
}

TEST_CASE("GPU: a communicator of the CPU is refused for a call on cuda:0, naming both devices") {
  const std::shared_ptr<Communicator> comm = one_rank_or_skip();
  if (!comm) return;
  const auto local = Communicator::local_group(1);
  AllReduceFwdOp op(local[0]->key());
  CHECK_THROWS_WITH_AS(op(counting({8}, DType::float32, 1.0)),
                       doctest::Contains(("communicator " + local[0]->key() + " is on cpu, but the call is on cuda:0").c_str()),
                       ValueError);
}

TEST_CASE("GPU: where NCCL cannot be loaded, a collective op on cuda:0 is refused with the loader's reason") {
  if (cuda_or_skip() == nullptr) return;
  const auto r = test::run_command("TILEOPS_NCCL_LIBRARY=/nonexistent/libnccl.so.2 " + test::tileops_cli_path() +
                                   " run AllReduceFwdOp --device cuda:0 --input x=[4,8]:float32 2>&1");
  CHECK(r.status != 0);
  CHECK_MESSAGE(r.out.find("AllReduceFwdOp: no implementation serves this call") != std::string::npos, r.out);
  CHECK_MESSAGE(r.out.find("nccl_all_reduce: cannot load") != std::string::npos, r.out);
  CHECK_MESSAGE(r.out.find("cannot load /nonexistent/libnccl.so.2 (named by TILEOPS_NCCL_LIBRARY)") != std::string::npos,
                r.out);
}
