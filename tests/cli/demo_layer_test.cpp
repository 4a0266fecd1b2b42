// The main job, embed_llama_layer, as a user runs it: several sequences side by side, each
// step checked against the reference kernels, and its bounds on --batch.
#include <doctest/doctest.h>

#include <string>

#include "support/run_command.hpp"

using tileops::test::run_command;

namespace {

tileops::test::CommandResult layer_demo(const std::string& args) {
  return run_command(std::string(TILEOPS_BIN_DIR) + "/embed_llama_layer " + args + " 2>&1");
}

}  // namespace

TEST_CASE("embed_llama_layer runs several sequences side by side and matches the reference kernels") {
  const auto r = layer_demo("--prompt 2 --steps 1 --batch 2");
  CHECK(r.status == 0);
  CHECK(r.out.find("2 sequence(s), prefill of 2 tokens, 1 decode steps") != std::string::npos);
  CHECK(r.out.find("the KV cache): max rel error") != std::string::npos);
  CHECK(r.out.find("PASS") != std::string::npos);
  CHECK(r.out.find("FAIL") == std::string::npos);
}

TEST_CASE("embed_llama_layer refuses a --batch outside 1 to 256 as a usage error") {
  for (const char* batch : {"0", "257", "-3"}) {
    CAPTURE(batch);
    const auto r = layer_demo(std::string("--batch ") + batch);
    CHECK(r.status == 2);
    CHECK(r.out.find("--batch must be from 1 to 256 sequences") != std::string::npos);
  }
  const auto r = layer_demo("--batch 256 --prompt 1024");
  CHECK(r.status == 2);
  CHECK(r.out.find("--batch times (--prompt + --steps) must be at most 131072 cached tokens") != std::string::npos);
}
