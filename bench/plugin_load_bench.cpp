// How long loading the plugins takes: the default plugin directory of the build plus, when the
// test suite is built, every case of the test plugin corpus. Prints the cold figure (the first
// load in the process: dlopen, symbol binding, registration) and benchmarks repeated loads into
// fresh hosts (libraries already mapped; registration and rollback dominate).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "plugin/plugin_host.hpp"
#include "tileops/paths.hpp"

namespace {

std::vector<std::filesystem::path> plugin_directories() {
  std::vector<std::filesystem::path> dirs{tileops::default_plugin_directory()};
#ifdef TILEOPS_TEST_PLUGIN_DIR
  std::vector<std::filesystem::path> cases;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(TILEOPS_TEST_PLUGIN_DIR, ec)) cases.push_back(entry.path());
  std::sort(cases.begin(), cases.end());
  dirs.insert(dirs.end(), cases.begin(), cases.end());
#endif
  return dirs;
}

void BM_LoadPluginsWarm(benchmark::State& state) {
  const auto dirs = plugin_directories();
  for (auto _ : state) {
    tileops::plugin::PluginHost host;
    host.load(dirs, {});
    benchmark::DoNotOptimize(host.loaded().size());
  }
}
BENCHMARK(BM_LoadPluginsWarm)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  const auto dirs = plugin_directories();
  {
    const auto start = std::chrono::steady_clock::now();
    tileops::plugin::PluginHost host;
    host.load(dirs, {});
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("cold load of %zu plugin directories: %zu plugins loaded, %zu load failures, %zu skipped in %.2f ms\n",
                dirs.size(), host.loaded().size(), host.failures().size(), host.skipped().size(), ms);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
