#include "demo_support.hpp"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/plugin.hpp"
#include "tileops/op_class.hpp"
#include "tileops/target.hpp"

namespace demo {

using namespace tileops;

void usage(const CommandLine& cl, const std::string& problem, bool help) {
  std::ostream& out = help ? std::cout : std::cerr;
  out << cl.program << ": " << problem << "\n" << cl.usage;
  std::exit(help ? 0 : 2);
}

void parse(const CommandLine& cl, int argc, char** argv, CommonOptions& common,
           const std::function<bool(const std::string&, const std::string&)>& own) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") usage(cl, cl.summary, true);
    if (i + 1 >= argc) usage(cl, "missing value after " + flag);
    const std::string value = argv[++i];
    try {
      if (flag == "--device") common.device = value;
      else if (flag == "--target") common.target = value;
      else if (flag == "--config") common.config = value;
      else if (flag == "--dtype") common.dtype = parse_dtype(value);
      else if (!own(flag, value)) usage(cl, "unknown option " + flag);
    } catch (const std::logic_error&) {
      usage(cl, "bad value '" + value + "' for " + flag);
    } catch (const Error& e) {
      usage(cl, e.what());
    }
  }
}

Tensor random(std::vector<std::int64_t> shape, DType dtype, const Device& device, float scale, std::uint64_t seed) {
  Tensor host = Tensor::empty(shape, DType::float32);
  float* p = host.data<float>();
  std::uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 1;
  for (std::int64_t i = 0; i < host.numel(); ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    p[i] = scale * (static_cast<float>(s >> 40) / static_cast<float>(1 << 24) * 2.0f - 1.0f);
  }
  return host.to(dtype).to(device);
}

std::string kernels_of(const Op& op, const std::string& prefix) {
  std::string s;
  const auto serving = op.serving_target();
  if (serving && !is_in_tree_target(*serving) && !op.op_class().interfaces().empty()) return prefix + "target " + *serving;
  for (const InterfaceDecl& d : op.op_class().interfaces()) {
    for (const BuiltEntry& e : op.built_entries(d.name)) s += (s.empty() ? "" : ", ") + prefix + e.key;
  }
  std::size_t i = 0;
  for (Op* sub : op.held_delegates()) {
    const std::string inner = kernels_of(*sub, op.op_class().delegate_types()[i++].stage + ":");
    s += (s.empty() ? "" : ", ") + inner;
  }
  return s;
}

Config start(const CommonOptions& common) {
  Config cfg = load_config(common.config ? std::optional<std::filesystem::path>(*common.config) : std::nullopt);
  set_config(cfg);
  load_backends();
  return cfg;
}

void print_backends(const Config& cfg) {
  std::printf("config: %s; default target: %s\n", cfg.file ? cfg.file->string().c_str() : "(none)",
              default_target().value_or("(detect per device)").c_str());
  for (const PluginInfo& p : loaded_plugins()) {
    std::printf("plugin loaded: %s %s (%s)\n", p.name.c_str(), p.version.c_str(), p.path.string().c_str());
  }
  for (const PluginLoadFailure& f : load_failures()) {
    std::printf("plugin load failure: %s: %s\n", f.path.string().c_str(), f.reason.c_str());
  }
  if (loaded_plugins().empty()) std::printf("plugin loaded: none (the in-tree reference kernels serve)\n");
}

}  // namespace demo
