// The `tileops` program on inputs that once crashed, hung or passed: each now gives a clear
// message and exit status 1 (an error) or 2 (a bad argument), and never dies of a signal.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "support/run_command.hpp"
#include "support/temp_dir.hpp"

using tileops::test::run_command;
namespace fs = std::filesystem;

namespace {

std::string cli() { return std::string(TILEOPS_CLI_PATH); }

// Runs `args` with stderr folded into the output, killed after 60 seconds (status 124).
tileops::test::CommandResult tileops_cli(const std::string& args, const std::string& env = "") {
  return run_command(env + " timeout 60 " + cli() + " " + args + " 2>&1");
}

bool contains(const std::string& text, const std::string& words) { return text.find(words) != std::string::npos; }

}  // namespace

TEST_CASE("run: an input whose element count overflows is a usage error naming the input and the limit") {
  const auto r = tileops_cli("run SoftmaxFwdOp -p dim=0 -i x=[4611686018427387905,4]");
  CHECK(r.status == 2);
  CHECK(contains(r.out, "--input x has shape [4611686018427387905, 4]: the product of its extents exceeds "
                        "9223372036854775807"));
}

TEST_CASE("run: an input the host cannot allocate is an error naming the bytes asked for") {
  const auto r = tileops_cli("run ReluFwdOp -i input=[1000000000000]");
  CHECK(r.status == 1);
  CHECK(contains(r.out, "tileops run: cpu cannot allocate 4000000000000 bytes"));
}

TEST_CASE("run: a negative extent is a usage error") {
  const auto r = tileops_cli("run ReluFwdOp -i input=[-1]");
  CHECK(r.status == 2);
  CHECK(contains(r.out, "--input input has shape [-1], which has a negative extent"));
}

TEST_CASE("run: an empty write selects no target and reports that, in text and JSON") {
  const auto text = tileops_cli("run SoftmaxFwdOp -i x=[0] -r 1");
  CHECK(text.status == 0);
  CHECK(contains(text.out, "serving target: (none: no implementation ran)"));
  const auto json = run_command(cli() + " run SoftmaxFwdOp -i x=[0] -r 1 --json");
  REQUIRE(json.status == 0);
  CHECK(nlohmann::json::parse(json.out).at("serving_target").is_null());
}

TEST_CASE("run: ALiBi with num_heads = INT64_MAX fails fast naming the output and the limit") {
  const auto r = tileops_cli("run AlibiFwdOp -p num_heads=9223372036854775807 -p seq_len=1 -p device=cpu");
  CHECK(r.status == 1);
  CHECK(contains(r.out, "AlibiFwdOp: output 'output' [num_heads, seq_len, seq_len] has shape [9223372036854775807, 1, 1]"));
  CHECK(contains(r.out, "more than 9223372036854775807 bytes"));
}

TEST_CASE("run: a GEMM whose output element count overflows fails at the call check") {
  const auto r = tileops_cli("run GemmFwdOp -i a=[4294967297,0] -i b=[4294967296,0]");
  CHECK(r.status == 1);
  CHECK(contains(r.out, "GemmFwdOp: output 'd' [M, N] has shape [4294967297, 4294967296]"));
}

TEST_CASE("run: --repeat below 1 is a usage error") {
  CHECK(tileops_cli("run ReluFwdOp -i input=[4] -r 0").status == 2);
}

TEST_CASE("bench: --peak-gbps and --peak-gflops must be positive finite numbers") {
  for (const char* value : {"0", "-1", "nan", "inf"}) {
    const auto gbps = tileops_cli(std::string("bench ReluFwdOp --cap 4 -r 1 --peak-gflops 1 --peak-gbps ") + value);
    CHECK(gbps.status == 2);
    CHECK(contains(gbps.out, std::string("--peak-gbps must be a positive finite number, got ") + value));
    const auto gflops = tileops_cli(std::string("bench ReluFwdOp --cap 4 -r 1 --peak-gbps 1 --peak-gflops ") + value);
    CHECK(gflops.status == 2);
  }
}

TEST_CASE("bench: a CSV file that cannot be written is an error, one that cannot be opened a usage error") {
  const auto full = tileops_cli("bench ReluFwdOp --cap 4 -r 1 --peak-gbps 1 --peak-gflops 1 --csv /dev/full");
  CHECK(full.status == 1);
  CHECK(contains(full.out, "tileops bench: cannot write --csv file '/dev/full': No space left on device"));
  const auto missing = tileops_cli("bench ReluFwdOp --cap 4 -r 1 --peak-gbps 1 --peak-gflops 1 --csv /nonexistent/x.csv");
  CHECK(missing.status == 2);
  CHECK(contains(missing.out, "cannot open --csv file '/nonexistent/x.csv' for writing"));
}

TEST_CASE("output that cannot be written to stdout is an error of every command") {
  const auto bench = run_command("timeout 60 " + cli() +
                                 " bench ReluFwdOp --cap 4 -r 1 --peak-gbps 1 --peak-gflops 1 --json 2>&1 >/dev/full");
  CHECK(bench.status == 1);
  CHECK(contains(bench.out, "tileops bench: cannot write the output to stdout: No space left on device"));
  const auto info = run_command("timeout 60 " + cli() + " info 2>&1 >/dev/full");
  CHECK(info.status == 1);
}

TEST_CASE("TILEOPS_CONFIG naming a loop, a long name, a directory, /dev/zero or a FIFO exits 1 at once") {
  tileops::test::TempDir dir;
  fs::create_symlink("loop.conf", dir.path() / "loop.conf");
  REQUIRE(mkfifo((dir.path() / "fifo.conf").c_str(), 0600) == 0);
  const std::string cases[][2] = {
      {(dir.path() / "loop.conf").string(), "Too many levels of symbolic links"},
      {"/" + std::string(5000, 'c'), "File name too long"},
      {dir.path().string(), "a directory; expected the path of a regular config file"},
      {"/dev/zero", "a character device"},
      {(dir.path() / "fifo.conf").string(), "a FIFO"},
  };
  for (const auto& [path, words] : cases) {
    const auto r = tileops_cli("info", "TILEOPS_CONFIG='" + path + "'");
    CHECK(r.status == 1);  // 124 would mean it blocked
    CHECK(contains(r.out, "tileops info: environment variable TILEOPS_CONFIG names"));
    CHECK(contains(r.out, words));
  }
}

TEST_CASE("a manifest directory of hostile entries is reported and the built-in ops still run") {
  tileops::test::TempDir dir;
  const fs::path specs = dir.path() / "specs";
  fs::create_directories(specs);
  fs::create_symlink("loop.yaml", specs / "loop.yaml");
  fs::create_symlink("/dev/zero", specs / "zero.yaml");
  fs::create_symlink("/proc/self/mem", specs / "mem.yaml");
  REQUIRE(mkfifo((specs / "fifo.yaml").c_str(), 0600) == 0);
  const fs::path conf = dir.write("tileops.conf", "manifest_path = specs\n");
  const auto run = tileops_cli("run RMSNormFwdOp -p normalized_shape=[8] -i x=[2,8] -r 1", "TILEOPS_CONFIG=" + conf.string());
  CHECK(run.status == 0);
  CHECK(contains(run.out, "loop.yaml cannot be opened: Too many levels of symbolic links"));
  CHECK(contains(run.out, "zero.yaml is a character device, not a regular file"));
  CHECK(contains(run.out, "fifo.yaml is a FIFO, not a regular file"));
  CHECK(contains(run.out, "mem.yaml cannot be read"));
  const auto validate = tileops_cli("validate " + specs.string());
  CHECK(validate.status == 1);
  CHECK(contains(validate.out, "0 op(s) in 4 file(s), 4 problem(s)"));
}

TEST_CASE("TILEOPS_CPU_THREADS abc, 0, -1 and huge warn, name the value and run on a sane thread count") {
  for (const char* value : {"abc", "0", "-1"}) {
    const auto r = tileops_cli("run ReluFwdOp -i input=[4194304] -r 1", std::string("TILEOPS_CPU_THREADS=") + value);
    CHECK(r.status == 0);
    CHECK(contains(r.out, std::string("TILEOPS_CPU_THREADS='") + value + "' is not a thread count: expected an "
                                                                         "integer from 1 to 1024"));
  }
  const auto huge = tileops_cli("run ReluFwdOp -i input=[4194304] -r 1", "TILEOPS_CPU_THREADS=99999999999999999999");
  CHECK(huge.status == 0);
  CHECK(contains(huge.out, "is more than the 1024 threads the cpu plugin runs; using 1024"));
}

TEST_CASE("TILEOPS_CPU_CACHE_BYTES must be a byte count, a bad one warns and the default is used") {
  const auto r = tileops_cli("run ReluFwdOp -i input=[4] -r 1", "TILEOPS_CPU_CACHE_BYTES=-1");
  CHECK(r.status == 0);
  CHECK(contains(r.out, "TILEOPS_CPU_CACHE_BYTES='-1' is not a byte count"));
}
