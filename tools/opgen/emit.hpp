// The text the generator writes: one header per manifest file, and the catalogue entries.
#pragma once

#include <map>
#include <ostream>
#include <optional>
#include <string>
#include <vector>

#include "op_model.hpp"

namespace opgen {

struct Options {
  std::string ns = "tileops";      // the namespace the classes are declared in
  std::string export_macro;         // e.g. TILEOPS_API; empty: none
  std::string export_include;       // the header defining export_macro
  std::string include_prefix;       // where the generated headers are included from, e.g. "tileops/ops/gen"
  std::string kernels_prefix;       // where the kernel interface headers are included from
};

// The header of one manifest file's ops. `home` maps every op the run knows to its manifest
// stem, so that a composite's stage ops are included from their own headers. A family of two
// or more implemented ops that all declare the same leading parameters (name, type, default,
// order; tensors excepted) gets a base class, <Family>FamilyOp, holding those; its ops derive it.
std::string emit_header(const std::string& stem, const std::vector<OpModel>& ops,
                        const std::map<std::string, std::string>& home, const Options& options);

// The header of one manifest file's kernel interfaces (namespace <ns>::ops), for kernel authors.
std::string emit_kernel_header(const std::string& stem, const std::vector<OpModel>& ops, const Options& options);

// The internal header declaring the ops' reference kernels (namespace <ns>::ref).
std::string emit_reference_header(const std::string& stem, const std::vector<OpModel>& ops, const Options& options);

// The source defining each implemented op's op_class(): its interfaces and reference kernels,
// or its stages. It includes <stem>_reference.hpp from its own directory. With `manifest_text`,
// it also embeds that text and adds it to the process's manifests while the program starts
// (tileops::add_embedded_manifest, named <stem>.yaml). Throws std::runtime_error when the text
// holds the raw string's closing delimiter.
std::string emit_op_classes(const std::string& stem, const std::vector<OpModel>& ops, const Options& options,
                            const std::optional<std::string>& manifest_text = std::nullopt);

// The catalogue entries of `ops` (those with a class), as the elements of a braced list of
// tileops::OpCatalogEntry, names qualified so that any namespace can hold them.
void emit_catalog_entries(std::ostream& o, const std::vector<const OpModel*>& ops);

// A header defining `<ns>::generated_catalog_entries()`: one OpCatalogEntry per implemented
// op, sorted by name.
std::string emit_catalog(std::vector<const OpModel*> ops, const Options& options);

}  // namespace opgen
