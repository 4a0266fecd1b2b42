#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include "plugin_host/corpus.hpp"
#include "tileops/config.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/plugin.hpp"

using tileops::test::corpus;
using tileops::test::has_target;

TEST_CASE("load_backends loads once per process: concurrent calls are safe and a later plugin_path is refused, not loaded") {
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([] { tileops::load_backends(); });
  for (auto& t : threads) t.join();
  const auto before = tileops::loaded_plugins();

  const tileops::Config saved = tileops::config();
  tileops::Config changed = saved;
  changed.plugin_path = {corpus("good")};
  CHECK_THROWS_AS(tileops::set_config(changed), tileops::ConfigError);
  CHECK(tileops::config().plugin_path == saved.plugin_path);
  tileops::load_backends();
  const auto after = tileops::loaded_plugins();

  CHECK(after.size() == before.size());
  CHECK_FALSE(has_target("plugtarget"));
}
