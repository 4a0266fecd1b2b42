// The NCCL (or RCCL: the same C interface) entry points the plugin calls, declared here and
// resolved with dlopen/dlsym at run time, so that the plugin links against neither library.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace tileops::nccl {

// The types of nccl.h this plugin passes, with the values NCCL 2.x defines.
using Comm = struct OpaqueComm*;
using Result = int;  // ncclResult_t; 0 is ncclSuccess
inline constexpr Result kSuccess = 0;
struct UniqueId {
  char internal[128];
};
enum DataType : int { kInt8 = 0, kUint8 = 1, kInt32 = 2, kInt64 = 4, kFloat16 = 6, kFloat32 = 7, kFloat64 = 8, kBfloat16 = 9 };
enum RedOp : int { kSum = 0, kMax = 2 };

struct Api {
  Result (*get_version)(int* version);
  Result (*get_unique_id)(UniqueId* id);
  Result (*comm_init_rank)(Comm* comm, int nranks, UniqueId id, int rank);
  Result (*comm_destroy)(Comm comm);
  Result (*all_reduce)(const void* send, void* recv, std::size_t count, DataType type, RedOp op, Comm comm,
                       void* stream);
  Result (*all_gather)(const void* send, void* recv, std::size_t send_count, DataType type, Comm comm, void* stream);
  Result (*reduce_scatter)(const void* send, void* recv, std::size_t recv_count, DataType type, RedOp op, Comm comm,
                           void* stream);
  const char* (*get_error_string)(Result result);
};

// Where a library comes from: its file name (libnccl.so.2), and the environment variable that
// names another file (TILEOPS_NCCL_LIBRARY).
struct LibrarySpec {
  std::string file;
  std::string env;
};

// An opened library: its entry points, version ("2.28.3") and the file the loader mapped.
struct Library {
  Api api{};
  std::string version;
  std::string path;
};

// Opens the library `spec` describes: the file the environment variable names when it is set
// (at most 4096 bytes), else `spec.file` through the loader's search. Never closed. Throws
// RuntimeError saying which file was tried, where the loader looked and its reason, or which
// entry point is missing.
Library open_library(const LibrarySpec& spec);

// "ncclAllReduce failed: <NCCL's description> (result 2)": the message of a failed call.
std::string failure(const Api& api, const char* call, Result result);

}  // namespace tileops::nccl
