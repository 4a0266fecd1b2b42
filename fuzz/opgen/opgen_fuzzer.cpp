// The op generator: the input is the text of a manifest file, which tileops-opgen turns into
// C++ (as at build time and in tileops_add_ops). A std::exception is a refusal (the generator
// names the file, op and field); a crash, a hang or undefined behaviour is a finding.
#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "emit.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const std::vector<opgen::OpModel> ops = opgen::read_manifest_text(text, "fuzzed", "fuzzed.yaml");
    opgen::Options options;
    options.export_macro = "TILEOPS_API";
    options.export_include = "tileops/export.hpp";
    options.include_prefix = "tileops/ops/gen";
    options.kernels_prefix = "tileops/extend/ops";
    std::map<std::string, std::string> home;
    std::vector<const opgen::OpModel*> all;
    for (const opgen::OpModel& op : ops) {
      home[op.name] = "fuzzed";
      all.push_back(&op);
    }
    (void)opgen::emit_header("fuzzed", ops, home, options);
    (void)opgen::emit_kernel_header("fuzzed", ops, options);
    (void)opgen::emit_reference_header("fuzzed", ops, options);
    (void)opgen::emit_op_classes("fuzzed", ops, options, text);
    (void)opgen::emit_catalog(all, options);
  } catch (const std::exception&) {
  }
  return 0;
}
