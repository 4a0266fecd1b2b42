// The generated call operators lend their tensors to the call (borrowed handles); what a call
// returns or keeps of them must still own them once the caller's handles are gone.
#include <doctest/doctest.h>

#include <optional>
#include <span>
#include <vector>

#include "support/watched_tensor.hpp"
#include "tileops/graph.hpp"
#include "tileops/ops/elementwise.hpp"

using namespace tileops;

namespace {

Tensor watched(bool* released, float value) { return test::watched_tensor(released, {value, -value, value, -value}); }

}  // namespace

TEST_CASE("call arguments: an output that is an argument (in place, or the out buffer) owns it after the call") {
  bool input_released = false;
  bool out_released = false;
  Tensor relu_result;
  Tensor add_result;
  {
    ReluFwdOp relu(/*inplace=*/true);
    const Tensor x = watched(&input_released, 2.0f);
    relu_result = relu(x);
    CHECK(relu_result.is_same(x));

    AddFwdOp add;
    const Tensor out = watched(&out_released, 0.0f);
    add_result = add(x, x, out);
    CHECK(add_result.is_same(out));
  }
  CHECK_FALSE(relu_result.is_borrowed());
  CHECK_FALSE(add_result.is_borrowed());
  CHECK_FALSE(input_released);
  CHECK_FALSE(out_released);
  CHECK(relu_result.to_doubles() == std::vector<double>{2, 0, 2, 0});
  CHECK(add_result.to_doubles() == std::vector<double>{4, 0, 4, 0});
  relu_result = Tensor();
  add_result = Tensor();
  CHECK(input_released);
  CHECK(out_released);
}

TEST_CASE("call arguments: a real tensor that a captured call takes is kept by the graph as an owning constant") {
  bool released = false;
  AddFwdOp add;
  std::optional<Graph> graph;
  {
    const Tensor bias = watched(&released, 1.0f);
    const TensorSpec spec{Device::cpu(), DType::float32, Shape{4}};
    graph = Graph::capture(std::span(&spec, 1), [&](std::span<const Tensor> in) {
      return std::vector<Tensor>{add(in[0], bias)};
    });
  }
  CHECK_FALSE(released);
  const Tensor x = Tensor::zeros({4}, DType::float32);
  CHECK(graph->run(std::span(&x, 1))[0].to_doubles() == std::vector<double>{1, -1, 1, -1});
  graph.reset();
  CHECK(released);
}
