#include "group_id.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tileops/errors.hpp"

namespace demo {

tileops::CommunicatorId exchange_group_id(const std::string& id_file, int world, int rank, tileops::DeviceType type) {
  using tileops::Communicator;
  if (world == 1) return Communicator::new_id(type);
  if (id_file.empty()) throw tileops::ValueError(std::to_string(world) + " ranks need --id-file to pass the group id");
  tileops::CommunicatorId id;
  const std::filesystem::path path(id_file);
  if (rank == 0) {
    id = Communicator::new_id(type);
    const std::filesystem::path partial = path.string() + ".partial";
    std::ofstream(partial, std::ios::binary).write(reinterpret_cast<const char*>(id.bytes.data()), id.bytes.size());
    std::filesystem::rename(partial, path);
    return id;
  }
  for (int waited_ms = 0; waited_ms < 120000; waited_ms += 50) {
    std::ifstream in(path, std::ios::binary);
    if (in && in.read(reinterpret_cast<char*>(id.bytes.data()), id.bytes.size())) return id;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  throw tileops::RuntimeError("rank " + std::to_string(rank) + " waited 120 s for rank 0 to write the group id to " +
                              id_file);
}

}  // namespace demo
