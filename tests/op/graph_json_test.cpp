// Graph serialisation: a captured graph written as JSON and loaded back replays like the
// eager calls, names its instances by key (a stale key fails at replay), and from_json
// refuses text that is not such a graph.
#include <doctest/doctest.h>

#include <limits>

#include <nlohmann/json.hpp>

#include "tileops/errors.hpp"
#include "tileops/extend/plugin.hpp"
#include "tileops/graph.hpp"
#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/rms_norm.hpp"
#include "tileops/ops/swiglu_mlp.hpp"
#include "tileops/testing.hpp"

using namespace tileops;

namespace {

// A Llama-style block (RMSNorm, the SwiGLU MLP, the residual add) of small sizes whose
// weights are real tensors: captured, they become the graph's constants.
struct SmallBlock {
  static constexpr std::int64_t kHidden = 64, kIntermediate = 96;
  RMSNormFwdOp norm{{kHidden}, 1e-5};
  SwiGLUMLPFwdOp mlp;
  AddFwdOp residual;
  std::vector<Tensor> weights;

  explicit SmallBlock(DType dtype)
      : weights(testing::random_tensors({TensorSpec{Device::cpu(), dtype, Shape{kHidden}},
                                         TensorSpec{Device::cpu(), dtype, Shape{2 * kIntermediate, kHidden}},
                                         TensorSpec{Device::cpu(), dtype, Shape{kHidden, kIntermediate}}},
                                        Device::cpu(), 99)) {}

  Tensor operator()(const Tensor& x) { return residual(x, mlp(norm(x, weights[0]), weights[1], weights[2])); }
};

Graph capture_block(SmallBlock& block, const TensorSpec& spec) {
  return Graph::capture(std::span(&spec, 1), [&](std::span<const Tensor> in) { return std::vector<Tensor>{block(in[0])}; });
}

nlohmann::json parsed(const Graph& g) { return nlohmann::json::parse(g.to_json()); }

Graph loaded(const nlohmann::json& j) { return Graph::from_json(j.dump()); }

}  // namespace

TEST_CASE("Graph JSON: capture, write, load and replay give what the eager calls give") {
  load_backends();
  for (DType dtype : {DType::float32, DType::bfloat16}) {
    CAPTURE(dtype_name(dtype));
    SmallBlock block(dtype);
    const TensorSpec spec{Device::cpu(), dtype, Shape{3, SmallBlock::kHidden}};
    const Tensor x = testing::random_tensors({spec}, Device::cpu(), 5).front();
    const std::vector<double> eager = block(x).to_doubles();

    const Graph graph = capture_block(block, spec);
    const std::string json = graph.to_json();
    const Graph back = Graph::from_json(json);
    CHECK(back.to_json() == json);
    REQUIRE(back.nodes().size() == graph.nodes().size());
    CHECK(back.nodes().size() == 5);  // rms_norm, gate_up, act, down, residual add
    CHECK(back.constants().size() == 3);
    CHECK(back.input_specs() == graph.input_specs());
    for (std::size_t i = 0; i < back.constants().size(); ++i) {
      CHECK(back.constants()[i].to_doubles() == block.weights[i].to_doubles());
    }
    const std::vector<Tensor> replayed = back.run(std::span(&x, 1));
    REQUIRE(replayed.size() == 1);
    CHECK(replayed[0].to_doubles() == eager);
  }
}

TEST_CASE("Graph JSON: a loaded graph whose op instance no longer exists fails at replay, naming the key") {
  load_backends();
  auto add = std::make_unique<AddFwdOp>();
  const TensorSpec spec{Device::cpu(), DType::float32, Shape{4}};
  const Graph graph = Graph::capture(std::span(&spec, 1), [&](std::span<const Tensor> in) {
    return std::vector<Tensor>{(*add)(in[0], in[0])};
  });
  const std::string key = add->instance_key();
  const std::string json = graph.to_json();
  add.reset();
  const Graph back = Graph::from_json(json);
  const Tensor x = testing::random_tensors({spec}, Device::cpu()).front();
  CHECK_THROWS_WITH_AS(back.run(std::span(&x, 1)), doctest::Contains((key + ", which no longer exists").c_str()), RuntimeError);
}

TEST_CASE("Graph JSON: a node naming an instance of another op class fails at replay") {
  load_backends();
  AddFwdOp add;
  ReluFwdOp relu;
  const TensorSpec spec{Device::cpu(), DType::float32, Shape{4}};
  const Graph graph =
      Graph::capture(std::span(&spec, 1), [&](std::span<const Tensor> in) { return std::vector<Tensor>{add(in[0], in[0])}; });
  nlohmann::json j = parsed(graph);
  j["nodes"][0]["instance"] = relu.instance_key();
  const Tensor x = testing::random_tensors({spec}, Device::cpu()).front();
  CHECK_THROWS_WITH_AS(loaded(j).run(std::span(&x, 1)), doctest::Contains("expects a AddFwdOp instance"), RuntimeError);
}

TEST_CASE("Graph JSON: from_json refuses text that is not a tileops graph, naming the field") {
  load_backends();
  SmallBlock block(DType::float32);
  const nlohmann::json good = parsed(capture_block(block, TensorSpec{Device::cpu(), DType::float32, Shape{2, 64}}));
  const auto refused = [](const nlohmann::json& j, const std::string& words) {
    CAPTURE(words);
    CHECK_THROWS_WITH_AS(Graph::from_json(j.dump()), doctest::Contains(words.c_str()), ValueError);
  };
  CHECK_THROWS_WITH_AS(Graph::from_json("{\"format\": "), doctest::Contains("is not JSON"), ValueError);
  CHECK_THROWS_WITH_AS(Graph::from_json("[1, 2]"), doctest::Contains("expected a JSON object"), ValueError);

  nlohmann::json j = good;
  j["format"] = "onnx";
  refused(j, "format: expected \"tileops-graph\"");
  j = good;
  j["version"] = 2;
  refused(j, "version: expected 1, got 2");
  j = good;
  j.erase("nodes");
  refused(j, "missing field 'nodes'");
  j = good;
  j["inputs"][0]["dtype"] = "float13";
  refused(j, "inputs[0]");
  j = good;
  j["inputs"][0]["shape"][0] = -2;
  refused(j, "extent -2 is negative");
  j = good;
  j["inputs"][0]["shape"] = {1ll << 40, 1ll << 40};
  refused(j, "overflows int64");
  j = good;
  j["nodes"][0]["inputs"][0] = 1000;
  refused(j, "nodes[0].inputs[0]: value id 1000 is outside");
  j = good;
  j["nodes"][0]["inputs"][0] = j["nodes"][1]["outputs"][0];
  refused(j, "is used before a node produces it");
  j = good;
  j["values"][0] = {{"tensor", 0}};
  refused(j, "unknown value source 'tensor'");
  j = good;
  j["values"][1] = {{"input", 0}};
  refused(j, "is already value of another id");
  j = good;
  j["constants"][0]["data"] = "AAAA";
  refused(j, "constants[0].data: expected 344 base64 characters for 256 bytes, got 4");
  j = good;
  std::string data = j["constants"][0]["data"].get<std::string>();
  data[0] = '*';
  j["constants"][0]["data"] = data;
  refused(j, "character 0 is not base64");
  j = good;
  j["outputs"] = nlohmann::json::array({-1});
  refused(j, "outputs[0]: value id -1 is outside [0, ");
}

TEST_CASE("Graph JSON: hostile graph files are a ValueError naming the field, never a crash or an undefined output") {
  load_backends();
  AddFwdOp add;
  const TensorSpec spec{Device::cpu(), DType::float32, Shape{4}};
  const nlohmann::json good = parsed(
      Graph::capture(std::span(&spec, 1), [&](std::span<const Tensor> in) { return std::vector<Tensor>{add(in[0], in[0])}; }));
  const auto refused = [](const std::string& text, const std::string& words) {
    CAPTURE(words);
    CHECK_THROWS_WITH_AS(Graph::from_json(text), doctest::Contains(words.c_str()), ValueError);
  };

  // Nesting: refused while parsing, before anything recurses over it.
  std::string deep = good.dump();
  deep.insert(deep.rfind('}'), ", \"extra\": " + std::string(100000, '[') + std::string(100000, ']'));
  refused(deep, "nests deeper than 32 levels");
  // A number beyond double's range is a parse failure of the text, not another exception.
  refused("{\"format\": \"tileops-graph\", \"version\": 1e400}", "the text: is not JSON");
  // An id of 2^64-1 is not -1 ("absent").
  nlohmann::json j = good;
  j["nodes"][0]["outputs"][0] = std::numeric_limits<std::uint64_t>::max();
  refused(j.dump(), "nodes[0].outputs[0]: expected an integer within int64, got 18446744073709551615");
  // A node may not list more outputs than its op declares.
  j = good;
  j["nodes"][0]["outputs"].push_back(-1);
  refused(j.dump(), "nodes[0].outputs: lists 2 outputs, but AddFwdOp has 1");
  // A long or structured value is quoted in part.
  j = good;
  j["format"] = std::string(100000, 'x');
  CHECK_THROWS_WITH_AS(Graph::from_json(j.dump()), doctest::Contains("got \"xxxxxxxx"), ValueError);
  try {
    Graph::from_json(j.dump());
  } catch (const ValueError& e) {
    CHECK(std::string(e.what()).size() < 200);
  }
  j = good;
  j["version"] = nlohmann::json::array({1, 2});
  refused(j.dump(), "version: expected an integer, got an array");
}
