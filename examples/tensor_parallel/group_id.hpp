// How the tensor-parallel examples bootstrap a group without a launcher: rank 0 makes the id and
// writes it to a file, the other ranks (processes started beside it) read it there.
#pragma once

#include <string>

#include "tileops/communicator.hpp"

namespace demo {

// The id of the group of `world` ranks on devices of `type`, as rank `rank` sees it. With one
// rank no file is needed. Rank 0 writes `id_file` through a rename, so a reader never sees half
// of it; the others wait up to two minutes for the file. Throws ValueError when a file is needed
// and `id_file` is empty, RuntimeError when the wait runs out, and what Communicator::new_id throws.
tileops::CommunicatorId exchange_group_id(const std::string& id_file, int world, int rank, tileops::DeviceType type);

}  // namespace demo
