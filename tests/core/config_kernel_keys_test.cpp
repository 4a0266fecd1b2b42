// The config keys that choose kernels: disable_kernels and prefer_kernels (file keys,
// TILEOPS_DISABLE_KERNELS and TILEOPS_PREFER_KERNELS, set_config), and where each list came from.
#include <doctest/doctest.h>

#include "support/scoped_config.hpp"
#include "support/temp_dir.hpp"
#include "tileops/config.hpp"
#include "tileops/errors.hpp"

using namespace tileops;
namespace fs = std::filesystem;

TEST_CASE("disable_kernels and prefer_kernels are read from the file with the line they came from") {
  test::TempDir dir;
  const test::ScopedEnv no_disable("TILEOPS_DISABLE_KERNELS", nullptr);
  const test::ScopedEnv no_prefer("TILEOPS_PREFER_KERNELS", nullptr);
  const fs::path file = dir.write("tileops.conf",
                                  "disable_kernels = cpu_rms_norm, cuda_rms_norm\n"
                                  "prefer_kernels = RMSNormFwdOp=rms_norm_reference , GemmFwdOp=cpu_blas_gemm\n");
  const Config c = load_config(file);
  CHECK(c.disable_kernels == std::vector<std::string>{"cpu_rms_norm", "cuda_rms_norm"});
  CHECK(c.prefer_kernels == std::vector<KernelPreference>{{"RMSNormFwdOp", "rms_norm_reference"}, {"GemmFwdOp", "cpu_blas_gemm"}});
  CHECK(c.disable_kernels_origin == "config file " + file.string() + ":1");
  CHECK(c.prefer_kernels_origin == "config file " + file.string() + ":2");
}

TEST_CASE("TILEOPS_DISABLE_KERNELS and TILEOPS_PREFER_KERNELS override the file and say so") {
  test::TempDir dir;
  const fs::path file = dir.write("tileops.conf", "disable_kernels = a\nprefer_kernels = XFwdOp=b\n");
  const test::ScopedEnv disable("TILEOPS_DISABLE_KERNELS", "c,d");
  const test::ScopedEnv prefer("TILEOPS_PREFER_KERNELS", "YFwdOp=e");
  const Config c = load_config(file);
  CHECK(c.disable_kernels == std::vector<std::string>{"c", "d"});
  CHECK(c.prefer_kernels == std::vector<KernelPreference>{{"YFwdOp", "e"}});
  CHECK(c.disable_kernels_origin == "environment variable TILEOPS_DISABLE_KERNELS");
  CHECK(c.prefer_kernels_origin == "environment variable TILEOPS_PREFER_KERNELS");
}

TEST_CASE("malformed kernel settings are refused naming the place, the value and the expected form") {
  test::TempDir dir;
  const test::ScopedEnv no_disable("TILEOPS_DISABLE_KERNELS", nullptr);
  const test::ScopedEnv no_prefer("TILEOPS_PREFER_KERNELS", nullptr);
  CHECK_THROWS_WITH_AS(parse_config_file(dir.write("a.conf", "disable_kernels = cpu rms\n")),
                       doctest::Contains("a.conf:1: key 'disable_kernels': invalid kernel type key 'cpu rms'; expected "
                                         "keys like cpu_rms_norm, without spaces, ',' or '='"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(parse_config_file(dir.write("b.conf", "prefer_kernels = cpu_rms_norm\n")),
                       doctest::Contains("b.conf:1: key 'prefer_kernels': invalid entry 'cpu_rms_norm'; expected "
                                         "Op=key entries like RMSNormFwdOp=cpu_rms_norm"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(parse_config_file(dir.write("c.conf", "prefer_kernels = A=x,A=y\n")),
                       doctest::Contains("c.conf:1: key 'prefer_kernels': A is named twice (=x and =y); expected at "
                                         "most one preferred kernel type per op"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(parse_config_file(dir.write("d.conf", "prefer_kernels = RMS-Norm=x\n")),
                       doctest::Contains("invalid op class name 'RMS-Norm'"), ConfigError);
  CHECK_THROWS_WITH_AS(parse_config_file(dir.write("e.conf", "prefer_kernels = A=\n")),
                       doctest::Contains("invalid kernel type key ''"), ConfigError);
  const test::ScopedEnv bad("TILEOPS_DISABLE_KERNELS", "a=b");
  CHECK_THROWS_WITH_AS(load_config(dir.write("f.conf", "")),
                       doctest::Contains("environment variable TILEOPS_DISABLE_KERNELS: invalid kernel type key 'a=b'"),
                       ConfigError);
}

TEST_CASE("set_config checks kernel settings like a file's and credits itself when no origin is given") {
  Config c = config();
  c.prefer_kernels = {{"AFwdOp", "x"}, {"AFwdOp", "y"}};
  CHECK_THROWS_WITH_AS(set_config(c), doctest::Contains("set_config: prefer_kernels: AFwdOp is named twice"), ConfigError);
  c.prefer_kernels = {{"AFwdOp", "x"}};
  c.disable_kernels = {"y"};
  const test::ScopedConfig scoped(c);
  CHECK(config().prefer_kernels_origin == "set_config");
  CHECK(config().disable_kernels_origin == "set_config");
  CHECK(config().disable_plugins_origin.empty());
}
