// `tileops run`, `tileops bench` and `tileops ops`: success and failure paths.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "support/run_command.hpp"
#include "support/sanitizer.hpp"
#include "support/temp_dir.hpp"

using tileops::test::run_command;

namespace {
std::string cli() { return std::string(TILEOPS_CLI_PATH); }
}  // namespace

TEST_CASE("tileops run reports target, kernels, record and roofline, and --check passes") {
  const auto r = run_command(cli() + " run RMSNormFwdOp -p normalized_shape=[64] -i x=[8,64]:bfloat16 "
                                     "-i weight=[64]:bfloat16 --check --json -r 2");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("serving_target") == "builtin");
  CHECK(j.at("kernels")[0].at("key") == "cpu_rms_norm");
  CHECK(j.at("last_call").at("tensors").at("y").at("shape") == nlohmann::json::array({8, 64}));
  CHECK(j.at("roofline").at("bytes").get<double>() == 2 * (8 * 64 * 2) + 64 * 2);
  CHECK(j.at("check").at("ok") == true);
}

TEST_CASE("tileops run --json shows the op's cache counters: the timed repeats hit the first call's entry") {
  const auto r = run_command(cli() + " run AddFwdOp -i a=[4,8]:float32 -i b=[4,8]:float32 --json -r 3");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& calls = j.at("caches")[0].at("calls");
  CHECK(j.at("caches")[0].at("op") == "AddFwdOp");
  CHECK(calls.at("misses") == 1);
  CHECK(calls.at("hits").get<int>() >= 3);
  CHECK(calls.at("entries") == 1);
  CHECK(calls.at("capacity") == 256);
  CHECK(calls.at("evictions") == 0);
  CHECK(j.at("caches")[0].at("target_kernels").at("entries") == 0);
  // One built entry serves the add interface: built on the first call, taken from the pool never again.
  const auto& entries = j.at("caches")[0].at("entries");
  CHECK(entries.at("entries") == 1);
  CHECK(entries.at("misses") == 1);
  CHECK(entries.at("capacity") == 256);
}

TEST_CASE("tileops run takes parameters and inputs from a workload row") {
  const auto r = run_command(cli() + " run GemmFwdOp --workload llama-8b-qkv-decode --target reference --json -r 1");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("serving_target") == "reference");
  CHECK(j.at("kernels")[0].at("key") == "gemm_reference");
}

TEST_CASE("tileops run: bad arguments exit 2 with one line, a signature error exits 1") {
  const auto unknown_op = run_command(cli() + " run NoSuchFwdOp 2>&1");
  CHECK(unknown_op.status == 2);
  CHECK(unknown_op.out.find("unknown op 'NoSuchFwdOp'") != std::string::npos);
  const auto bad_param = run_command(cli() + " run RMSNormFwdOp -p normalized_shape=abc 2>&1");
  CHECK(bad_param.status == 2);
  CHECK(bad_param.out.find("parameter 'normalized_shape'") != std::string::npos);
  const auto bad_input = run_command(cli() + " run RMSNormFwdOp -p normalized_shape=[4] -i q=[2,4] 2>&1");
  CHECK(bad_input.status == 2);
  CHECK(bad_input.out.find("has no input 'q'") != std::string::npos);
  const auto signature = run_command(cli() + " run RMSNormFwdOp -p normalized_shape=[4] -i x=[2,5] 2>&1");
  CHECK(signature.status == 1);
  CHECK(signature.out.find("RMSNormFwdOp: input 'x'") != std::string::npos);
  const auto missing = run_command(cli() + " run 2>&1");
  CHECK(missing.status == 2);
}

TEST_CASE("tileops bench times capped workload rows and writes CSV") {
  tileops::test::TempDir dir;
  const auto csv = dir.path() / "bench.csv";
  const auto r = run_command(cli() + " bench SiluAndMulFwdOp --cap 16 -r 1 --peak-gbps 10 --peak-gflops 10 --json --csv " +
                             csv.string());
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.at("rows").size() >= 1);
  CHECK(j.at("rows")[0].at("op") == "SiluAndMulFwdOp");
  CHECK(j.at("rows")[0].at("gbps").get<double>() > 0);
  CHECK(std::filesystem::file_size(csv) > 0);
  const auto bad = run_command(cli() + " bench NoSuchFwdOp 2>&1");
  CHECK(bad.status == 2);
  const auto bad_cap = run_command(cli() + " bench --cap 0 2>&1");
  CHECK(bad_cap.status == 2);
}

TEST_CASE("tileops ops lists every op with its interfaces and the cpu plugin's kernel types") {
  const auto r = run_command(cli() + " ops --json");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.size() == 34);
  bool found = false;
  for (const auto& op : j) {
    if (op.at("name") != "RMSNormFwdOp") continue;
    found = true;
    CHECK(op.at("compile_op_names")[0] == "tileops::norm_rms_norm_fwd");
    // The reference kernel first, then one kernel type per plugin that brings one (cpu; cuda
    // and rocm where their toolchains were found), each keyed after the device type it runs on.
    const auto& kernels = op.at("interfaces")[0].at("kernels");
    REQUIRE(kernels.size() >= 2);
    CHECK(kernels[0].at("key") == "rms_norm_reference");
    bool cpu = false;
    for (std::size_t i = 1; i < kernels.size(); ++i) {
      cpu = cpu || kernels[i].at("plugin") == "cpu";
      REQUIRE(kernels[i].at("devices").size() == 1);
      CHECK(kernels[i].at("key") == kernels[i].at("devices")[0].get<std::string>() + "_rms_norm");
    }
    CHECK(cpu);
  }
  CHECK(found);
  const auto text = run_command(cli() + " ops GemmFwdOp");
  CHECK(text.status == 0);
  CHECK(text.out.find("interface gemm") != std::string::npos);
  CHECK(run_command(cli() + " ops NoSuchFwdOp 2>&1").status == 2);
}

TEST_CASE("tileops bench --svg draws each row under the two ceilings, labelled by op, case and kernel") {
  tileops::test::TempDir dir;
  const auto svg_path = dir.path() / "roof.svg";
  const auto r = run_command(cli() + " bench SiluAndMulFwdOp --cap 16 -r 1 --peak-gbps 10 --peak-gflops 100 --svg " +
                             svg_path.string() + " > /dev/null 2>&1");
  REQUIRE(r.status == 0);
  std::ifstream in(svg_path);
  const std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(svg.rfind("<svg ", 0) == 0);
  CHECK(svg.find("class=\"roof\"") != std::string::npos);
  CHECK(svg.find("100 GFLOP/s") != std::string::npos);
  CHECK(svg.find("10 GB/s, cpu") != std::string::npos);
  const auto rows = [&] {
    int n = 0;
    for (auto at = svg.find("class=\"row\""); at != std::string::npos; at = svg.find("class=\"row\"", at + 1)) ++n;
    return n;
  }();
  CHECK(rows >= 1);
  CHECK(svg.find("SiluAndMulFwdOp ") != std::string::npos);
  CHECK(svg.find("cpu_silu_and_mul") != std::string::npos);
  CHECK(run_command(cli() + " bench SiluAndMulFwdOp --cap 16 --svg /nonexistent/dir/roof.svg > /dev/null 2>&1").status == 2);
}

TEST_CASE("tileops ops --json lists each op's workload cases: id, label, parameters, input shapes, dtypes and index ranges") {
  const auto r = run_command(cli() + " ops --json GroupedQueryAttentionPagedDecodeFwdOp");
  REQUIRE(r.status == 0);
  const auto rows = nlohmann::json::parse(r.out)[0].at("workloads");
  REQUIRE(rows.size() == 6);
  const auto& first = rows[0];
  CHECK(first.at("id") == "llama3-8b-b32-4k-p16-bfloat16");
  CHECK(first.at("label") == "llama3-8b-b32-4k-p16");
  CHECK(first.at("params").empty());
  const auto& inputs = first.at("inputs");
  REQUIRE(inputs.size() == 5);
  CHECK(inputs[1].at("name") == "k_pages");
  CHECK(inputs[1].at("shape") == nlohmann::json::array({8192, 16, 8, 128}));
  CHECK(inputs[1].at("dtype") == "bfloat16");
  CHECK_FALSE(inputs[1].contains("range"));
  CHECK(inputs[3].at("name") == "block_table");
  CHECK(inputs[3].at("range") == nlohmann::json::array({0, 8191}));
  CHECK(inputs[4].at("range") == nlohmann::json::array({0, 4096}));
  const auto rope = nlohmann::json::parse(run_command(cli() + " ops --json RopeFwdOp").out)[0].at("workloads");
  CHECK(rope[0].at("params").at("theta") == 500000.0);
}

TEST_CASE("tileops run --workload ID --cap N scales the row as bench --cap does and checks it") {
  const auto r = run_command(cli() + " run GroupedQueryAttentionPagedDecodeFwdOp --workload llama3-8b-b32-4k-p16-bfloat16 "
                                     "--cap 24 --check --json -r 1");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("last_call").at("tensors").at("k_pages").at("shape") == nlohmann::json::array({24, 16, 8, 24}));
  CHECK(j.at("last_call").at("tensors").at("block_table").at("shape") == nlohmann::json::array({24, 24}));
  CHECK(j.at("kernels")[0].at("key") == "cpu_gqa_paged_decode");
  CHECK(j.at("check").at("ok") == true);
  const auto no_row = run_command(cli() + " run GemmFwdOp --cap 8 2>&1");
  CHECK(no_row.status == 2);
  CHECK(no_row.out.find("--cap scales a --workload row") != std::string::npos);
  const auto bad_cap = run_command(cli() + " run GemmFwdOp --workload llama-8b-qkv-decode --cap 0 2>&1");
  CHECK(bad_cap.status == 2);
  CHECK(bad_cap.out.find("--cap must be positive, got 0") != std::string::npos);
}

TEST_CASE("tileops run -d meta draws nothing on the host: a 3-billion-element meta input runs in 1 GiB of address space") {
#ifdef TILEOPS_TEST_UNDER_SANITIZER
  MESSAGE("skipped: an address-space limit cannot hold a sanitizer's shadow memory");
#else
  // Drawn on the host first, the input alone would take 12 GB, and its float64 draw 24 GB more.
  const auto r = run_command("ulimit -v 1048576 && " + cli() + " run ReluFwdOp -d meta -i input=[3000000000] -r 1 --json");
  INFO(r.out);
  REQUIRE(r.status == 0);
  const auto report = nlohmann::json::parse(r.out);
  CHECK(report["last_call"]["tensors"]["output"]["shape"] == nlohmann::json::array({3000000000LL}));
#endif
}
