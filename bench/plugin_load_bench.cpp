// How long loading the plugins takes. Prints the process's load of the plugins on the
// configured path (the build's own by default: what the first op construction pays); then,
// when the test suite is built, a cold load of every case of the test plugin corpus into a
// host of its own, and a benchmark of repeated loads into fresh hosts (libraries already
// mapped; registration and rollback dominate).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "tileops/extend/plugin_host.hpp"
#include "tileops/extend/plugin.hpp"
#include "tileops/ops/rms_norm.hpp"
#include "tileops/paths.hpp"

namespace {

// The test corpus's plugin directories (none when the test suite is not built). The build's
// own plugins are not among them: the process has registered those already. Nor are the cases
// whose static constructors throw: loading them ends the process by design.
std::vector<std::filesystem::path> corpus_directories() {
  std::vector<std::filesystem::path> dirs;
#ifdef TILEOPS_TEST_PLUGIN_DIR
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(TILEOPS_TEST_PLUGIN_DIR, ec)) {
    const std::string name = entry.path().filename().string();
    if (name != "ctorthrows" && name != "ctorterminates") dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
#endif
  return dirs;
}

void BM_LoadCorpusWarm(benchmark::State& state, const std::vector<std::filesystem::path>& dirs) {
  for (auto _ : state) {
    tileops::plugin::PluginHost host;
    host.load(dirs, {});
    benchmark::DoNotOptimize(host.loaded().size());
  }
}

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The process's own load (what the first op construction triggers), then the first and
// second constructions of an op class once the plugins are in.
void process_load() {
  auto start = std::chrono::steady_clock::now();
  tileops::load_backends();
  const double load_ms = milliseconds_since(start);
  start = std::chrono::steady_clock::now();
  tileops::RMSNormFwdOp first(std::vector<std::int64_t>{4096}, 1e-6);
  const double first_ms = milliseconds_since(start);
  start = std::chrono::steady_clock::now();
  tileops::RMSNormFwdOp second(std::vector<std::int64_t>{4096}, 1e-6);
  const double second_ms = milliseconds_since(start);
  std::printf("load_backends (%zu plugins on the configured path): %.2f ms; then the first RMSNormFwdOp: %.2f ms, "
              "the second: %.3f ms\n",
              tileops::loaded_plugins().size(), load_ms, first_ms, second_ms);
}

}  // namespace

int main(int argc, char** argv) {
  process_load();
  const auto dirs = corpus_directories();
  if (!dirs.empty()) {
    const auto start = std::chrono::steady_clock::now();
    tileops::plugin::PluginHost host;
    host.load(dirs, {});
    const double ms = milliseconds_since(start);
    std::printf("cold load of the test corpus's %zu plugin directories: %zu plugins loaded, %zu load failures, %zu skipped in %.2f ms\n",
                dirs.size(), host.loaded().size(), host.failures().size(), host.skipped().size(), ms);
    benchmark::RegisterBenchmark("BM_LoadCorpusWarm", BM_LoadCorpusWarm, dirs)->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
