/* DLPack 1.x's DLManagedTensorVersioned for C and C++. Debian 12's libdlpack-dev is DLPack
   0.6, which predates the versioned struct: then this header defines it, with DLPack 1.0's
   names and layout, for consumers and producers built against 0.x headers. */
#ifndef TILEOPS_DLPACK_VERSIONED_H
#define TILEOPS_DLPACK_VERSIONED_H

#include <dlpack/dlpack.h>
#include <stdint.h>

#ifndef DLPACK_MAJOR_VERSION
#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 0
#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
#ifdef __cplusplus
extern "C" {
#endif
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;
#ifdef __cplusplus
}
#endif
#endif

#endif
