// Exports the ABI version but none of the other entry points.
#include "tileops/extend/plugin.hpp"

TILEOPS_PLUGIN_EXPORT int tileops_plugin_abi_version() noexcept { return TILEOPS_PLUGIN_ABI_VERSION; }
