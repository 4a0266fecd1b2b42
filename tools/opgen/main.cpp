// tileops-opgen: writes the C++ surface of the ops in manifest files (docs/writing-an-op.md):
// one header per manifest file and, optionally, the catalogue entries.
//
//   tileops-opgen --out-dir DIR [--namespace NS] [--include-prefix P] [--export-macro M
//                 --export-include H] [--catalog FILE] MANIFEST.yaml...
//
// A file is rewritten only when its text changes, so an unchanged manifest rebuilds nothing.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "emit.hpp"

namespace {

void write_if_changed(const std::filesystem::path& path, const std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (in) {
    std::ostringstream old;
    old << in.rdbuf();
    if (old.str() == text) return;
  }
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

int run(int argc, char** argv) {
  opgen::Options options;
  std::filesystem::path out_dir;
  std::filesystem::path catalog;
  std::vector<std::string> manifests;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--out-dir") {
      out_dir = value();
    } else if (arg == "--namespace") {
      options.ns = value();
    } else if (arg == "--include-prefix") {
      options.include_prefix = value();
    } else if (arg == "--export-macro") {
      options.export_macro = value();
    } else if (arg == "--export-include") {
      options.export_include = value();
    } else if (arg == "--catalog") {
      catalog = value();
    } else if (arg.starts_with("--")) {
      throw std::runtime_error("unknown option " + arg);
    } else {
      manifests.push_back(arg);
    }
  }
  if (out_dir.empty() || manifests.empty()) throw std::runtime_error("usage: tileops-opgen --out-dir DIR MANIFEST.yaml...");
  std::map<std::string, std::vector<opgen::OpModel>> files;
  std::map<std::string, std::string> home;
  for (const std::string& m : manifests) {
    auto ops = opgen::read_manifest(m);
    if (ops.empty()) continue;
    const std::string stem = ops.front().stem;
    for (const auto& op : ops) {
      if (!home.emplace(op.name, stem).second) throw std::runtime_error(m + ": " + op.name + " is defined twice");
    }
    files[stem] = std::move(ops);
  }
  std::vector<const opgen::OpModel*> all;
  for (const auto& [stem, ops] : files) {
    write_if_changed(out_dir / (stem + ".hpp"), opgen::emit_header(stem, ops, home, options));
    for (const auto& op : ops) all.push_back(&op);
  }
  if (!catalog.empty()) write_if_changed(catalog, opgen::emit_catalog(all, options));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "tileops-opgen: " << e.what() << "\n";
    return 1;
  }
}
