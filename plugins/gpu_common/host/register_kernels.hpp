// Registers the shared GPU kernel types, keyed "<device type>_<interface>" (cuda_rms_norm,
// hip_rms_norm, ...).
#pragma once

#include "tileops/extend/backend.hpp"

namespace tileops::gpu {

void register_kernels(Registrar& registrar);

}  // namespace tileops::gpu
