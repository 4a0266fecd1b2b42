// EmbeddingFwdOp (manifests/embedding.yaml): rows looked up for int32 and int64 ids of several
// shapes, empty ids, and ids outside the vocabulary refused on the host with the id, its
// position and the vocabulary size, before anything is read or written. Its workload rows run
// in numerics_test.cpp with every other op of the catalogue.
#include <doctest/doctest.h>

#include <vector>

#include "tileops/errors.hpp"
#include "tileops/ops/embedding.hpp"

using namespace tileops;

namespace {

const Target kReference = std::string(REFERENCE);
const Target kTargets[] = {Target(), kReference};

// weight [vocab, hidden] with weight[v, h] = 10 v + h (exact in every dtype for the sizes used here).
Tensor table(std::int64_t vocab, std::int64_t hidden, DType dtype) {
  std::vector<double> values;
  for (std::int64_t v = 0; v < vocab; ++v) {
    for (std::int64_t h = 0; h < hidden; ++h) values.push_back(static_cast<double>(10 * v + h));
  }
  return Tensor::from_doubles(values, {vocab, hidden}, dtype);
}

}  // namespace

TEST_CASE("Embedding copies the row of each id, for int32 and int64 ids of any shape") {
  for (const Target& target : kTargets) {
    for (DType index : {DType::int32, DType::int64}) {
      for (DType dtype : {DType::float32, DType::float16, DType::bfloat16}) {
        CAPTURE(target.value_or("default"));
        CAPTURE(dtype_name(index));
        CAPTURE(dtype_name(dtype));
        const Tensor weight = table(10, 3, dtype);
        const std::vector<double> id_values{4, 0, 9, 4, 7, 1};
        EmbeddingFwdOp op(target);
        const Tensor y = op(Tensor::from_doubles(id_values, {2, 3}, index), weight);
        REQUIRE(y.shape() == Shape{2, 3, 3});
        CHECK(y.dtype() == dtype);
        const std::vector<double> got = y.to_doubles();
        for (std::size_t i = 0; i < id_values.size(); ++i) {
          for (std::size_t h = 0; h < 3; ++h) CHECK(got[i * 3 + h] == 10 * id_values[i] + static_cast<double>(h));
        }
        if (!target) {
          REQUIRE(op.last_call()->kernels.size() == 1);
          CHECK(op.last_call()->kernels[0] == "cpu_embedding");
        }
      }
    }
  }
}

TEST_CASE("Embedding takes one id (a scalar) and a strided view of ids") {
  const Tensor weight = table(5, 4, DType::float32);
  for (const Target& target : kTargets) {
    EmbeddingFwdOp op(target);
    const Tensor one = op(Tensor::from_doubles(std::vector<double>{3}, {}, DType::int64), weight);
    CHECK(one.shape() == Shape{4});
    CHECK(one.to_doubles() == std::vector<double>{30, 31, 32, 33});
    const Tensor ids = Tensor::from_doubles(std::vector<double>{1, 2, 3, 4}, {2, 2}, DType::int32).transpose(0, 1);
    CHECK(op(ids, weight).to_doubles() ==
          std::vector<double>{10, 11, 12, 13, 30, 31, 32, 33, 20, 21, 22, 23, 40, 41, 42, 43});
  }
}

TEST_CASE("Embedding of empty ids is empty, [*S, H]") {
  for (const Target& target : kTargets) {
    for (DType index : {DType::int32, DType::int64}) {
      EmbeddingFwdOp op(target);
      const Tensor y = op(Tensor::empty({0}, index), table(6, 8, DType::bfloat16));
      CHECK(y.shape() == Shape{0, 8});
      CHECK(y.dtype() == DType::bfloat16);
      CHECK(op(Tensor::empty({3, 0}, index), table(6, 8, DType::float32)).shape() == Shape{3, 0, 8});
    }
  }
}

TEST_CASE("Embedding refuses an id outside the vocabulary with ValueError naming the id, its position and V") {
  const Tensor weight = table(10, 4, DType::float32);
  const std::vector<double> before = weight.to_doubles();
  for (const Target& target : kTargets) {
    for (DType index : {DType::int32, DType::int64}) {
      CAPTURE(target.value_or("default"));
      CAPTURE(dtype_name(index));
      EmbeddingFwdOp op(target);
      op(Tensor::from_doubles(std::vector<double>{1}, {1}, index), weight);
      const SignatureCallPtr good = op.last_call();
      CHECK_THROWS_WITH_AS(op(Tensor::from_doubles(std::vector<double>{3, 10, 2, 5}, {4}, index), weight),
                           "EmbeddingFwdOp: ids[1] = 10 is outside the vocabulary: expected 0 to 9 (vocabulary size "
                           "V = 10, the rows of weight)",
                           ValueError);
      CHECK_THROWS_WITH_AS(op(Tensor::from_doubles(std::vector<double>{3, 0, 2, 5, 1, -1}, {2, 3}, index), weight),
                           "EmbeddingFwdOp: ids[1, 2] = -1 is outside the vocabulary: expected 0 to 9 (vocabulary "
                           "size V = 10, the rows of weight)",
                           ValueError);
      // Nothing was written: the weight is as it was, and the failed calls left no record.
      CHECK(weight.to_doubles() == before);
      CHECK(op.last_call() == good);
    }
  }
  const Tensor empty_vocab = Tensor::empty({0, 4}, DType::float32);
  CHECK_THROWS_WITH_AS(EmbeddingFwdOp()(Tensor::from_doubles(std::vector<double>{0}, {1}, DType::int64), empty_vocab),
                       doctest::Contains("ids[0] = 0 is outside the vocabulary: the vocabulary is empty (vocabulary "
                                         "size V = 0"),
                       ValueError);
}

TEST_CASE("Embedding takes int32 and int64 ids only, and a two-axis weight") {
  const Tensor weight = table(4, 2, DType::float32);
  CHECK_THROWS_AS(EmbeddingFwdOp()(Tensor::zeros({2}, DType::float32), weight), TypeError);
  CHECK_THROWS_AS(EmbeddingFwdOp()(Tensor::zeros({2}, DType::int32), Tensor::zeros({8}, DType::float32)), ValueError);
}
