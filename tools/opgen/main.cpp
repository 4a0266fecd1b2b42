// tileops-opgen: writes the C++ surface of the ops in manifest files (docs/writing-an-op.md).
// For each manifest file <stem>.yaml:
//   --out-dir/<stem>.hpp               the op classes (application API)
//   --kernels-out-dir/<stem>.hpp       the kernel interfaces (kernel authors' API)
//   --internal-dir/<stem>_reference.hpp, <stem>_op_classes.cpp
//                                      the reference kernels' classes and each op's op_class()
// and, optionally, the catalogue entries.
//
//   tileops-opgen --out-dir DIR --kernels-out-dir DIR --kernels-prefix P --internal-dir DIR
//                 [--namespace NS] [--include-prefix P] [--export-macro M --export-include H]
//                 [--catalog FILE] [--embed-manifests] MANIFEST.yaml...
//
// --embed-manifests puts each manifest's text into its <stem>_op_classes.cpp, added to the
// process's manifests while the program starts (an application's ops need no file at run time).
//
// A file is rewritten only when its text changes, so an unchanged manifest rebuilds nothing.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
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

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) throw std::runtime_error("cannot read " + path);
  return text.str();
}

constexpr const char* kUsage =
    "usage: tileops-opgen --out-dir DIR --kernels-out-dir DIR --kernels-prefix P --internal-dir DIR\n"
    "                     [--namespace NS] [--include-prefix P] [--export-macro M --export-include H]\n"
    "                     [--catalog FILE] [--embed-manifests] MANIFEST.yaml...\n"
    "Writes the op classes, kernel interfaces, reference kernel classes and op-class records of the\n"
    "ops in the manifests (docs/writing-an-op.md).\n";

// A command line that cannot be run: the message and the usage on stderr, exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

int run(int argc, char** argv) {
  opgen::Options options;
  std::filesystem::path out_dir;
  std::filesystem::path kernels_out_dir;
  std::filesystem::path internal_dir;
  std::filesystem::path catalog;
  std::vector<std::string> manifests;
  bool embed = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (arg == "--out-dir") {
      out_dir = value();
    } else if (arg == "--kernels-out-dir") {
      kernels_out_dir = value();
    } else if (arg == "--kernels-prefix") {
      options.kernels_prefix = value();
    } else if (arg == "--internal-dir") {
      internal_dir = value();
    } else if (arg == "--namespace") {
      options.ns = value();
    } else if (arg == "--include-prefix") {
      options.include_prefix = value();
    } else if (arg == "--export-macro") {
      options.export_macro = value();
    } else if (arg == "--export-include") {
      options.export_include = value();
    } else if (arg == "--embed-manifests") {
      embed = true;
    } else if (arg == "--catalog") {
      catalog = value();
    } else if (arg.starts_with("--")) {
      throw UsageError("unknown option " + arg);
    } else {
      manifests.push_back(arg);
    }
  }
  if (out_dir.empty() || kernels_out_dir.empty() || options.kernels_prefix.empty() || internal_dir.empty() ||
      manifests.empty()) {
    throw UsageError("--out-dir, --kernels-out-dir, --kernels-prefix, --internal-dir and a manifest are required");
  }
  std::map<std::string, std::vector<opgen::OpModel>> files;
  std::map<std::string, std::string> texts;  // by stem, with --embed-manifests
  std::map<std::string, std::string> home;
  for (const std::string& m : manifests) {
    auto ops = opgen::read_manifest(m);
    if (ops.empty()) continue;
    const std::string stem = ops.front().stem;
    if (embed) texts[stem] = read_text(m);
    for (const auto& op : ops) {
      if (!home.emplace(op.name, stem).second) throw std::runtime_error(m + ": " + op.name + " is defined twice");
    }
    files[stem] = std::move(ops);
  }
  std::vector<const opgen::OpModel*> all;
  for (const auto& [stem, ops] : files) {
    write_if_changed(out_dir / (stem + ".hpp"), opgen::emit_header(stem, ops, home, options));
    write_if_changed(kernels_out_dir / (stem + ".hpp"), opgen::emit_kernel_header(stem, ops, options));
    write_if_changed(internal_dir / (stem + "_reference.hpp"), opgen::emit_reference_header(stem, ops, options));
    const auto text = texts.find(stem);
    write_if_changed(internal_dir / (stem + "_op_classes.cpp"),
                     opgen::emit_op_classes(stem, ops, options,
                                            text == texts.end() ? std::nullopt : std::optional<std::string>(text->second)));
    for (const auto& op : ops) all.push_back(&op);
  }
  if (!catalog.empty()) write_if_changed(catalog, opgen::emit_catalog(all, options));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "tileops-opgen: " << e.what() << "\n" << kUsage;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "tileops-opgen: " << e.what() << "\n";
    return 1;
  }
}
