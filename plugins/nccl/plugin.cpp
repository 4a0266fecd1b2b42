// libtileops_nccl.so: the collective ops on cuda through NCCL and on hip through RCCL, both
// opened at run time. Where a library is missing the plugin still loads: its provider says
// where the loader looked, and the collective ops on that device type are refused with it.
#include "collective_kernels.hpp"
#include "nccl_provider.hpp"
#include "tileops/extend/plugin.hpp"

TILEOPS_PLUGIN(nccl, TILEOPS_VERSION_STRING, registrar) {
  using namespace tileops::nccl;
  auto cuda = std::make_shared<Provider>("nccl", "cuda", LibrarySpec{"libnccl.so.2", "TILEOPS_NCCL_LIBRARY"});
  auto hip = std::make_shared<Provider>("rccl", "hip", LibrarySpec{"librccl.so.1", "TILEOPS_RCCL_LIBRARY"});
  registrar.register_collective_provider(cuda);
  registrar.register_collective_provider(hip);
  set_providers(cuda, hip);
  registrar.add<AllReduceKernel>("nccl_all_reduce");
  registrar.add<AllGatherKernel>("nccl_all_gather");
  registrar.add<ReduceScatterKernel>("nccl_reduce_scatter");
}
