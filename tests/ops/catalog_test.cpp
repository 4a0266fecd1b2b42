// The op catalogue's makers: parameters by name, the manifest's defaults, and the construction
// check's messages for a missing or ill-typed parameter.
#include <doctest/doctest.h>

#include "tileops/errors.hpp"
#include "tileops/ops/catalog.hpp"
#include "tileops/ops/layer_norm.hpp"

using namespace tileops;

TEST_CASE("a catalogue make without a required parameter names it and its manifest type") {
  CHECK_THROWS_WITH_AS(find_op("RMSNormFwdOp").make({}, {}),
                       doctest::Contains("missing required parameter 'normalized_shape' (list[int])"), TypeError);
}

TEST_CASE("a catalogue make with a value of the wrong kind names the expected type") {
  CHECK_THROWS_WITH_AS(find_op("RMSNormFwdOp").make({{"normalized_shape", std::int64_t{4096}}}, {}),
                       doctest::Contains("parameter 'normalized_shape' = 4096 (int) is not of type list[int]"), TypeError);
}

TEST_CASE("a catalogue make fills omitted parameters with the manifest's defaults") {
  const auto op = find_op("LayerNormFwdOp").make({{"normalized_shape", std::vector<std::int64_t>{8}}}, {});
  CHECK(op->params().at("eps") == Value(1.0e-5));
  CHECK(dynamic_cast<const LayerNormFwdOp&>(*op).eps() == 1.0e-5);
  const auto batch_norm = find_op("BatchNormFwdOp").make({}, {});
  CHECK(batch_norm->params().at("momentum") == Value(0.1));
}

TEST_CASE("a catalogue make converts a dtype or device named by a string") {
  const auto alibi = find_op("AlibiFwdOp").make(
      {{"seq_len", std::int64_t{4}}, {"num_heads", std::int64_t{2}}, {"out_dtype", std::string("float16")},
       {"device", std::string("cpu")}},
      {});
  CHECK(alibi->params().at("out_dtype") == Value(DType::float16));
  CHECK(alibi->params().at("device") == Value(Device::cpu()));
}
