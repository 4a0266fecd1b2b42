// The plugin ABI check: the facts a plugin records, compared with this
// libtileops's before anything of the plugin runs, and the message naming both sides.
#include <doctest/doctest.h>

#include <cstdlib>

#include "plugin/abi_check.hpp"
#include "tileops/extend/plugin_host.hpp"
#include "plugin_host/corpus.hpp"

using tileops::plugin::abi_facts_str;
using tileops::plugin::abi_mismatch;
using tileops::plugin::host_abi_facts;
using tileops::plugin::PluginHost;
using tileops::plugin_abi::AbiFacts;
using tileops::test::corpus;
using tileops::test::has_target;

TEST_CASE("the host's ABI facts are those of its own build") {
  const AbiFacts& host = host_abi_facts();
  CHECK(host.size == sizeof(AbiFacts));
  CHECK(host.abi_version == TILEOPS_PLUGIN_ABI_VERSION);
  CHECK(host.tileops_major == TILEOPS_VERSION_MAJOR);
  CHECK(host.tileops_minor == TILEOPS_VERSION_MINOR);
  CHECK(host.boost_version == BOOST_VERSION);
  CHECK(host.cxx11_string_abi == _GLIBCXX_USE_CXX11_ABI);
  CHECK(host.cxx_abi_version == __GXX_ABI_VERSION);
  CHECK(abi_facts_str(host).starts_with("tileops " + std::to_string(TILEOPS_VERSION_MAJOR) + "." +
                                        std::to_string(TILEOPS_VERSION_MINOR) + ", "));
  CHECK_FALSE(abi_mismatch(host, host).has_value());
}

TEST_CASE("every recorded fact that differs is a mismatch naming both sides and what differs") {
  const AbiFacts host = host_abi_facts();
  struct Case {
    const char* what;
    void (*change)(AbiFacts&);
  };
  const Case cases[] = {
      {"the tileops versions", [](AbiFacts& f) { f.tileops_minor += 1; }},
      {"the compiler families",
       [](AbiFacts& f) {
         f.compiler = f.compiler == tileops::plugin_abi::kCompilerGcc ? tileops::plugin_abi::kCompilerClang
                                                                      : tileops::plugin_abi::kCompilerGcc;
       }},
      {"the C++ ABI versions", [](AbiFacts& f) { f.cxx_abi_version += 1; }},
      {"the libstdc++ string ABIs", [](AbiFacts& f) { f.cxx11_string_abi = 1 - f.cxx11_string_abi; }},
      {"the Boost versions", [](AbiFacts& f) { f.boost_version += 100; }},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    AbiFacts plugin = host;
    c.change(plugin);
    const auto why = abi_mismatch(plugin, host);
    REQUIRE(why.has_value());
    CHECK(*why == "was built with " + abi_facts_str(plugin) + ", but this libtileops was built with " +
                      abi_facts_str(host) + ": " + c.what +
                      " differ, so the C++ types that cross the plugin boundary may not agree; rebuild the plugin "
                      "against this tileops with the same compiler family and Boost");
  }
  AbiFacts other_compiler_version = host;
  other_compiler_version.compiler_version += 1;
  CHECK_FALSE(abi_mismatch(other_compiler_version, host).has_value());
}

TEST_CASE("another plugin ABI version, or facts shorter than this version's, are mismatches") {
  AbiFacts plugin = host_abi_facts();
  plugin.abi_version = 1;
  CHECK(abi_mismatch(plugin, host_abi_facts()) ==
        "was built for plugin ABI version 1, but this libtileops speaks version " +
            std::to_string(TILEOPS_PLUGIN_ABI_VERSION) + "; rebuild it against this tileops");
  plugin = host_abi_facts();
  plugin.size = 8;
  CHECK(abi_mismatch(plugin, host_abi_facts())->starts_with("records 8 bytes of ABI facts"));
}

TEST_CASE("a plugin whose file records mismatched facts is refused before it is opened: no code of it runs") {
  unsetenv("TILEOPS_TEST_ABI_MISMATCH_OPENED");
  PluginHost host;
  host.load({corpus("abimismatch")});
  REQUIRE(host.failures().size() == 1);
  CHECK(host.failures()[0].plugin == "abi_mismatch");
  const std::string& reason = host.failures()[0].reason;
  CHECK(reason.find("libstdc++ old (pre-C++11) string ABI") != std::string::npos);
  CHECK(reason.find("but this libtileops was built with " + abi_facts_str(host_abi_facts())) != std::string::npos);
  CHECK(reason.find(": the libstdc++ string ABIs and the Boost versions differ") != std::string::npos);
  CHECK(std::getenv("TILEOPS_TEST_ABI_MISMATCH_OPENED") == nullptr);  // its static constructor never ran
  CHECK_FALSE(has_target("abi_mismatch_target"));
}

TEST_CASE("facts that only exist once the library is initialised are checked before any plugin function runs") {
  PluginHost host;
  host.load({corpus("abilate")});
  REQUIRE(host.failures().size() == 1);
  CHECK(host.failures()[0].plugin == "abi_late");
  CHECK(host.failures()[0].reason.find(": the tileops versions differ") != std::string::npos);
  CHECK_FALSE(has_target("abi_late_target"));  // its registration never ran
}
