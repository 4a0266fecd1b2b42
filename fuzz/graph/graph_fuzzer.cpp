// Graph files: the input is the text given to Graph::from_json. A ValueError (or any
// tileops::Error) is a refusal; anything else is a finding, and so is a graph that loads but
// does not write back to text that loads as the same graph.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "tileops/errors.hpp"
#include "tileops/graph.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string written;
  try {
    written = tileops::Graph::from_json(text).to_json();
  } catch (const tileops::Error&) {
    return 0;
  }
  if (tileops::Graph::from_json(written).to_json() != written) std::abort();
  return 0;
}
