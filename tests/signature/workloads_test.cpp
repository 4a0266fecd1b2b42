// Workload rows instantiated into cases: ids, parameters, input specs and the ranges of index
// inputs; every built-in case passes its own call check and has a roofline.
#include <doctest/doctest.h>

#include <algorithm>

#include "signature/plan_support.hpp"
#include "tileops/testing.hpp"

using namespace tileops;

namespace {

std::vector<std::string> ids(const std::vector<WorkloadCase>& cases) {
  std::vector<std::string> out;
  for (const WorkloadCase& c : cases) out.push_back(c.id);
  return out;
}

}  // namespace

TEST_CASE("case ids join the label, the dtype_cases values in forall order and the dtype parameters") {
  const auto rms = test::plan("RMSNormFwdOp")->workload_cases();
  CHECK(ids(rms) == std::vector<std::string>{"llama-8b-prefill-float16", "llama-8b-prefill-bfloat16", "llama-8b-decode-bfloat16",
                                             "llama-70b-prefill-float16", "llama-70b-prefill-bfloat16", "llama-70b-decode-bfloat16",
                                             "llama-8b-no-weight-float32"});
  const auto alibi = ids(test::plan("AlibiFwdOp")->workload_cases());
  CHECK(alibi == std::vector<std::string>{"mpt-7b-2k-float16", "mpt-7b-2k-bfloat16", "mpt-7b-8k-bfloat16"});
  const auto sum = ids(test::plan("SumFwdOp")->workload_cases());
  CHECK(sum[2] == "llama-8b-hidden-bfloat16-float32");
  const auto add = ids(test::plan("AddFwdOp")->workload_cases());
  CHECK(add.back() == "position-ids-offset-int32");
}

TEST_CASE("a case carries the row's parameters and one spec per input, absent when not passed") {
  const auto rms = test::plan("RMSNormFwdOp")->workload_cases();
  const WorkloadCase& prefill = rms[1];
  CHECK(prefill.label == "llama-8b-prefill");
  CHECK(value_str(prefill.params.at("normalized_shape")) == "[4096]");
  CHECK(value_str(prefill.params.at("eps")) == "1e-05");
  REQUIRE(prefill.inputs.size() == 2);
  REQUIRE(prefill.inputs[0].has_value());
  CHECK(shape_str(prefill.inputs[0]->shape) == "[2048, 4096]");
  CHECK(prefill.inputs[0]->dtype == DType::bfloat16);
  CHECK(prefill.inputs[0]->device == Device::cpu());
  CHECK(shape_str(prefill.inputs[1]->shape) == "[4096]");
  CHECK_FALSE(rms.back().inputs[1].has_value());
  CHECK_FALSE(rms.back().params.contains("eps"));

  const auto gemm = test::plan("GemmFwdOp")->workload_cases();
  const WorkloadCase& nn = gemm.back();
  CHECK(nn.label == "llama-70b-down-nn");
  CHECK(value_str(nn.params.at("trans_b")) == "false");
  CHECK(shape_str(nn.inputs[0]->shape) == "[2048, 28672]");
  CHECK(shape_str(nn.inputs[1]->shape) == "[28672, 8192]");
  const auto sum = test::plan("SumFwdOp")->workload_cases();
  CHECK(value_str(sum[2].params.at("dtype")) == "float32");
}

TEST_CASE("every built-in case passes its call check on meta tensors and has a roofline") {
  const char* ops[] = {"RMSNormFwdOp",
                       "FusedAddRMSNormFwdOp",
                       "LayerNormFwdOp",
                       "BatchNormFwdOp",
                       "SoftmaxFwdOp",
                       "SiluAndMulFwdOp",
                       "GeluAndMulFwdOp",
                       "AddFwdOp",
                       "ReluFwdOp",
                       "AlibiFwdOp",
                       "GemmFwdOp",
                       "SumFwdOp",
                       "ProdFwdOp",
                       "MeanFwdOp",
                       "MaxPool2dFwdOp",
                       "AvgPool2dFwdOp",
                       "SwiGLUMLPFwdOp",
                       "GeluFwdOp",
                       "GroupedQueryAttentionFwdOp",
                       "GroupedQueryAttentionDecodeFwdOp",
                       "GroupedQueryAttentionPagedDecodeFwdOp",
                       "MoERouteFwdOp",
                       "MoEExpertsFwdOp",
                       "FusedMoEFwdOp",
                       "FusedMoESharedExpertFwdOp",
                       "RopeFwdOp",
                       "RopeInterleavedFwdOp",
                       "LongRoPEFwdOp"};
  int count = 0;
  for (const char* op : ops) {
    CAPTURE(op);
    const auto p = test::plan(op);
    for (const WorkloadCase& c : p->workload_cases()) {
      CAPTURE(c.id);
      std::vector<Tensor> inputs;
      for (const auto& spec : c.inputs) inputs.push_back(spec ? test::meta(spec->shape, spec->dtype) : Tensor());
      const auto checked = test::run_call(*p, c.params, inputs);
      const RooflineFigures r = p->eval_roofline(checked.record);
      CHECK(r.flops > 0);
      CHECK(r.bytes > 0);
      ++count;
    }
  }
  CHECK(count == 205);
}

TEST_CASE("GeluFwdOp's roofline counts 9 flops per element for the tanh form and 5 for erf") {
  const auto p = test::plan("GeluFwdOp");
  const std::vector<WorkloadCase> cases = p->workload_cases();
  auto flops_of = [&](const std::string& id) {
    for (const WorkloadCase& c : cases) {
      if (c.id != id) continue;
      const auto checked = test::run_call(*p, c.params, {test::meta(c.inputs[0]->shape, c.inputs[0]->dtype)});
      return p->eval_roofline(checked.record).flops;
    }
    FAIL("no case " << id);
    return 0.0;
  };
  CHECK(flops_of("gpt2-mlp-prefill-float16") == 9.0 * 1024 * 3072);
  CHECK(flops_of("bert-base-ffn-float32") == 5.0 * 8 * 512 * 3072);
}

TEST_CASE("the cache appends count no flops, and as bytes the new keys and values read and written once and the index inputs") {
  const auto roofline_of = [](const char* op) {
    const auto p = test::plan(op);
    const WorkloadCase c = p->workload_cases()[0];
    std::vector<Tensor> inputs;
    for (const auto& spec : c.inputs) inputs.push_back(test::meta(spec->shape, spec->dtype));
    return p->eval_roofline(test::run_call(*p, c.params, inputs).record);
  };
  // llama3-8b-prefill-2k, bfloat16: 2048 tokens of 8 heads of 128, one length.
  const RooflineFigures contiguous = roofline_of("KVCacheAppendFwdOp");
  CHECK(contiguous.flops == 0);
  CHECK(contiguous.bytes == 4.0 * 2048 * 8 * 128 * 2 + 4);
  // llama3-8b-decode-b32-p16, bfloat16: one token for each of 32 sequences, their lengths and
  // block-table rows of 256 entries.
  const RooflineFigures paged = roofline_of("PagedKVCacheAppendFwdOp");
  CHECK(paged.flops == 0);
  CHECK(paged.bytes == 4.0 * 32 * 8 * 128 * 2 + 4.0 * 32 * 257);
}

TEST_CASE("the embedding counts no flops, and as bytes each id and its row read and written once") {
  const auto p = test::plan("EmbeddingFwdOp");
  const WorkloadCase c = p->workload_cases()[0];  // llama-8b-prefill, int64 ids, bfloat16 rows
  CHECK(c.id == "llama-8b-prefill-int64-bfloat16");
  std::vector<Tensor> inputs;
  for (const auto& spec : c.inputs) inputs.push_back(test::meta(spec->shape, spec->dtype));
  const RooflineFigures r = p->eval_roofline(test::run_call(*p, c.params, inputs).record);
  CHECK(r.flops == 0);
  CHECK(r.bytes == 2048.0 * (2 * 4096 * 2 + 8));
}

TEST_CASE("the embedding's ids take their values from [0, V - 1], whichever integer dtype the case gives them") {
  const auto cases = test::plan("EmbeddingFwdOp")->workload_cases();
  REQUIRE(cases.size() >= 2);
  for (const WorkloadCase& c : {cases[0], cases[1]}) {
    CAPTURE(c.id);
    REQUIRE(c.ranges.size() == 2);
    CHECK(c.ranges[0] == ValueRange{0, 128255});
    CHECK_FALSE(c.ranges[1].has_value());
  }
  CHECK(cases[0].inputs[0]->dtype == DType::int64);
  CHECK(cases[1].inputs[0]->dtype == DType::int32);
}

TEST_CASE("the attention workload cases draw their lengths and block-table entries from the inputs' ranges") {
  const auto decode = test::plan("GroupedQueryAttentionDecodeFwdOp")->workload_cases();
  REQUIRE(decode[0].ranges.size() == 4);
  CHECK_FALSE(decode[0].ranges[0].has_value());
  CHECK(decode[0].ranges[3] == ValueRange{0, 4096});
  const auto paged = test::plan("GroupedQueryAttentionPagedDecodeFwdOp")->workload_cases(
      [](std::string_view, std::int64_t v) { return std::min<std::int64_t>(v, 48); });
  CHECK(paged[0].ranges[3] == ValueRange{0, 47});       // block_table: [0, NB - 1], NB capped at 48
  CHECK(paged[0].ranges[4] == ValueRange{0, 48 * 16});  // cache_seqlens: [0, MB * BS]
  const auto append = test::plan("KVCacheAppendFwdOp")->workload_cases();
  CHECK(append[0].ranges[4] == ValueRange{0, 4096 - 2048});
}

TEST_CASE("random_inputs draws an index input's values from its range and the others as random_tensors does") {
  const auto cases = test::plan("GroupedQueryAttentionPagedDecodeFwdOp")->workload_cases(
      [](std::string_view, std::int64_t v) { return std::min<std::int64_t>(v, 48); });
  const std::vector<Tensor> inputs = testing::random_inputs(cases[0], Device::cpu());
  const std::vector<double> table = inputs[3].to_doubles(), lens = inputs[4].to_doubles();
  CHECK(*std::min_element(table.begin(), table.end()) >= 0);
  CHECK(*std::max_element(table.begin(), table.end()) <= 47);
  CHECK(*std::max_element(table.begin(), table.end()) > 3);  // not the [-3, 3] of an unbounded integer input
  CHECK(*std::min_element(lens.begin(), lens.end()) >= 0);
  CHECK(*std::max_element(lens.begin(), lens.end()) <= 48 * 16);
  CHECK(testing::compare(inputs[0], testing::random_tensors(cases[0].inputs, Device::cpu())[0]).max_abs == 0);
}
