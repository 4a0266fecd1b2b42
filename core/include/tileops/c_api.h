/* The C API of tileops: the boundary other languages (Python through ctypes, Rust, ...) call.
   Plain C, exported by libtileops.so under the prefix tileops_.

   Conventions:
   * Every function that can fail returns a tileops_status*: NULL on success, else an error the
     caller reads with tileops_status_kind() and tileops_status_message() and releases with
     tileops_status_free(). The kinds mirror the C++ error family (tileops/errors.hpp);
     tileops_error_kind_parent() gives the hierarchy. No function aborts or lets a C++
     exception escape on bad input.
   * Handles (tileops_op, tileops_tensor, tileops_params) are opaque; each has a _free function.
     A handle may be used by several threads at once, but must not be freed while another
     thread uses it.
   * Versioned structs start with `size_t struct_size`, which the caller sets to the sizeof it
     was compiled with. A struct the library reads must not be larger than the library's own
     (TypeError naming both sizes) nor smaller than its first version; a struct the library
     writes is filled up to its struct_size.
   * DLPack: every function that takes a DLManagedTensor or DLManagedTensorVersioned takes
     ownership of it, whether it succeeds or fails: its deleter (when not NULL) runs exactly
     once, when tileops no longer needs the memory or before the function returns an error.
     Exported managed tensors belong to the caller, who calls their deleter once.
   * Strings the library returns through `char**` are NUL-terminated UTF-8, released with
     tileops_string_free(). `const char*` arguments must be NUL-terminated and at most
     TILEOPS_MAX_NAME_LENGTH bytes long (names, dtypes, devices, targets); longer ones are a
     ValueError. */
#ifndef TILEOPS_C_API_H
#define TILEOPS_C_API_H

#include <stddef.h>
#include <stdint.h>

#include "tileops/dlpack_versioned.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TILEOPS_C_API __attribute__((visibility("default")))

/* The version of the C API this header describes; tileops_get_version() reports the
   library's. A minor version only adds functions, struct fields at the end and flag bits. */
#define TILEOPS_C_API_VERSION_MAJOR 1
#define TILEOPS_C_API_VERSION_MINOR 2

/* The longest string argument, in bytes without the NUL. */
#define TILEOPS_MAX_NAME_LENGTH 4096

/* ---- Errors ------------------------------------------------------------------------------ */

/* Error kinds, one per class of the C++ error family. */
#define TILEOPS_OK 0
#define TILEOPS_ERROR 1                    /* tileops::Error, the root */
#define TILEOPS_TYPE_ERROR 2               /* an Error */
#define TILEOPS_VALUE_ERROR 3              /* an Error */
#define TILEOPS_RUNTIME_ERROR 4            /* an Error */
#define TILEOPS_OUT_OF_MEMORY_ERROR 5      /* a RuntimeError */
#define TILEOPS_OP_NOT_AVAILABLE_ERROR 6   /* a RuntimeError */
#define TILEOPS_AMBIGUOUS_TARGET_ERROR 7   /* a RuntimeError */
#define TILEOPS_UNKNOWN_TARGET_ERROR 8     /* a ValueError */
#define TILEOPS_BACKEND_ERROR 9            /* a RuntimeError */
#define TILEOPS_CONFIG_ERROR 10            /* a ValueError */
#define TILEOPS_MANIFEST_ERROR 11          /* a ValueError */
#define TILEOPS_ERROR_KIND_COUNT 12

typedef struct tileops_status tileops_status;

/* The kind of `status`: TILEOPS_OK for NULL. */
TILEOPS_C_API int tileops_status_kind(const tileops_status* status);
/* The message of `status`, a complete sentence naming what was expected and what was seen
   (the C++ exception's what()); "" for NULL. Valid until the status is freed. */
TILEOPS_C_API const char* tileops_status_message(const tileops_status* status);
/* Releases `status`; NULL is ignored. */
TILEOPS_C_API void tileops_status_free(tileops_status* status);
/* The C++ class name of `kind` ("ValueError"), "" for TILEOPS_OK, NULL for a value that is no
   kind. */
TILEOPS_C_API const char* tileops_error_kind_name(int kind);
/* The kind `kind` derives from: TILEOPS_ERROR for TYPE/VALUE/RUNTIME_ERROR, TILEOPS_RUNTIME_ERROR
   for OUT_OF_MEMORY_ERROR, ...; TILEOPS_OK for TILEOPS_ERROR, TILEOPS_OK and values that are no
   kind. */
TILEOPS_C_API int tileops_error_kind_parent(int kind);

/* ---- Version and strings ------------------------------------------------------------------ */

typedef struct tileops_version_info {
  size_t struct_size;
  uint32_t api_major;   /* TILEOPS_C_API_VERSION_MAJOR of the library */
  uint32_t api_minor;
  const char* library;  /* the library's version, "0.1.0"; static */
} tileops_version_info;

/* Fills `info` up to info->struct_size. TypeError when info is NULL or its struct_size is
   smaller than the first version's. */
TILEOPS_C_API tileops_status* tileops_get_version(tileops_version_info* info);

/* Releases a string the library returned; NULL is ignored. */
TILEOPS_C_API void tileops_string_free(char* text);

/* ---- Process-wide facts as JSON ------------------------------------------------------------ */

/* `*json`: an array with one object per in-tree op, sorted by name, or (when `op_name` is not
   NULL) that op's object alone: {name, family, status, params: [{name, type | dtype + shape,
   required, default}], inputs: [{name, dtype, shape[, optional][, mutated]}], outputs: [{name,
   dtype, shape[, nullable][, buffer][, alias]}], compile_op_names, boundary_operators: [{name,
   written, out, null_outputs}], interfaces, delegates, targets}. Loads the backends. ValueError
   listing the known ops for an unknown name. */
TILEOPS_C_API tileops_status* tileops_ops_json(const char* op_name, char** json);
/* `*json`: the cases of op `op_name`'s manifest workload rows, in row order (one per dtype
   case): [{id, label, params: {name: value}, inputs: [{shape, dtype, device} or null, one per
   manifest input]}]. With `index_cap` > 0 every index value above it is lowered to it (rows
   scaled down for tests; parameters never change); 0 keeps the rows as written. ValueError for
   an unknown op or a negative cap. */
TILEOPS_C_API tileops_status* tileops_workloads_json(const char* op_name, int64_t index_cap, char** json);
/* `*json`: {version, config_file, default_target, log_level, config_search_path, plugin_path,
   devices, plugins, load_failures, targets}, as `tileops info --json` prints it. */
TILEOPS_C_API tileops_status* tileops_info_json(char** json);
/* `*json`: {plugins: [{name, version, path, warnings}], load_failures: [{path, plugin,
   reason}], skipped: [{name, path, reason}]}. */
TILEOPS_C_API tileops_status* tileops_plugins_json(char** json);
/* `*json`: [{name, ops}] of the registered targets. */
TILEOPS_C_API tileops_status* tileops_targets_json(char** json);
/* `*svg`: the roofline picture (an SVG document) of `bench_json`, the object `tileops bench
   --json` prints ({peak_gbps, peak_gflops or null, rows: [{op, case, gbps, gflops, kernels}]}):
   each row a point at its FLOP per byte and achieved GFLOP/s under the bandwidth and compute
   ceilings; `device` (may be NULL) names the device in the legend. ValueError naming the field
   when the text is not such an object or a peak is not a positive finite number, or when it is
   longer than 64 MiB. Since API 1.1. */
TILEOPS_C_API tileops_status* tileops_roofline_svg(const char* bench_json, const char* device, char** svg);

/* ---- Tensors ----------------------------------------------------------------------------- */

typedef struct tileops_tensor tileops_tensor;

/* DLPack flags of imports and exports. */
#define TILEOPS_DLPACK_UINT8_AS_BOOL 1u  /* import: a uint8 tensor holds bool (producers that
                                            predate kDLBool send bool so) */
#define TILEOPS_DLPACK_LEGACY_BOOL 2u    /* legacy export: a bool tensor goes out with kDLBool
                                            (code 6), which DLPack 0.8 gave the legacy struct */
#define TILEOPS_DLPACK_READ_ONLY 4u      /* import: never write the memory (as if the producer
                                            had flagged it read-only); versioned export: flag
                                            the tensor read-only */

/* Imports a DLPack tensor without copying (tileops::from_dlpack: the dtypes, devices and
   limits listed there). `flags`: TILEOPS_DLPACK_UINT8_AS_BOOL (TypeError when the tensor is not
   uint8) and TILEOPS_DLPACK_READ_ONLY, or 0. Takes ownership of `managed` (see the conventions). A versioned tensor
   flagged DLPACK_FLAG_BITMASK_READ_ONLY is never written. */
TILEOPS_C_API tileops_status* tileops_tensor_from_dlpack(DLManagedTensor* managed, uint32_t flags,
                                                         tileops_tensor** tensor);
TILEOPS_C_API tileops_status* tileops_tensor_from_dlpack_versioned(DLManagedTensorVersioned* managed,
                                                                   uint32_t flags, tileops_tensor** tensor);
/* Exports `tensor` without copying as a legacy DLManagedTensor (tileops::to_dlpack). `flags`: 0
   or TILEOPS_DLPACK_LEGACY_BOOL; a bool tensor without it is a TypeError. */
TILEOPS_C_API tileops_status* tileops_tensor_to_dlpack(const tileops_tensor* tensor, uint32_t flags,
                                                       DLManagedTensor** managed);
/* Exports `tensor` without copying for a consumer that reads DLPack up to version
   max_major.max_minor (tileops::to_dlpack_versioned): TypeError for a consumer below 1.0.
   `flags`: 0 or TILEOPS_DLPACK_READ_ONLY; a read-only tensor is always flagged so. */
TILEOPS_C_API tileops_status* tileops_tensor_to_dlpack_versioned(const tileops_tensor* tensor, uint32_t max_major,
                                                                 uint32_t max_minor, uint32_t flags,
                                                                 DLManagedTensorVersioned** managed);
/* A new tensor of `ndim` (0 to 64) extents `shape` and dtype `dtype` ("float32", ...) on
   `device` ("cpu", "meta", "cuda:0", ...), with uninitialised contents. `strides` (in elements,
   each at least 0) may be NULL for a contiguous tensor; otherwise the tensor is a view of new
   memory that spans every element it addresses. On "meta" nothing is allocated: what a meta
   call (tileops_op_call with meta tensors) reads. ValueError for a bad shape, stride, dtype or
   device; OutOfMemoryError when the device has no memory for it. */
TILEOPS_C_API tileops_status* tileops_tensor_empty(const int64_t* shape, const int64_t* strides, int32_t ndim,
                                                   const char* dtype, const char* device, tileops_tensor** tensor);

typedef struct tileops_tensor_info {
  size_t struct_size;
  const char* dtype;        /* "float32", ...; static */
  int32_t ndim;
  const int64_t* shape;     /* ndim extents; valid while the tensor handle lives */
  const int64_t* strides;   /* ndim strides, in elements; likewise */
  const char* device_type;  /* "cpu", "meta", "cuda", ...; valid while the handle lives */
  int32_t device_index;
  void* data;               /* the first element; NULL for meta tensors and empty storage */
  int32_t read_only;        /* 1: memory its producer lent for reading only */
} tileops_tensor_info;

/* Fills `info` up to info->struct_size. */
TILEOPS_C_API tileops_status* tileops_tensor_get_info(const tileops_tensor* tensor, tileops_tensor_info* info);
/* Releases the handle (the memory lives while other handles or exports view it); NULL is
   ignored. */
TILEOPS_C_API void tileops_tensor_free(tileops_tensor* tensor);

/* ---- Construction parameters -------------------------------------------------------------- */

typedef struct tileops_params tileops_params;

/* An empty parameter map. */
TILEOPS_C_API tileops_status* tileops_params_create(tileops_params** params);
TILEOPS_C_API void tileops_params_free(tileops_params* params);
/* Set parameter `name` (adding or replacing it) to None, a bool (0 or 1), an int, a float (a
   finite or infinite double; NaN is a ValueError), a string, a dtype by name (ValueError naming
   the dtypes for another), a device ("cuda:0"), a list of `count` ints (at most 2^20), or a
   construction-time tensor (shared with the handle, which stays the caller's). Kinds are
   checked against the manifest when the op is created. */
TILEOPS_C_API tileops_status* tileops_params_set_none(tileops_params* params, const char* name);
TILEOPS_C_API tileops_status* tileops_params_set_bool(tileops_params* params, const char* name, int32_t value);
TILEOPS_C_API tileops_status* tileops_params_set_int(tileops_params* params, const char* name, int64_t value);
TILEOPS_C_API tileops_status* tileops_params_set_float(tileops_params* params, const char* name, double value);
TILEOPS_C_API tileops_status* tileops_params_set_string(tileops_params* params, const char* name, const char* value);
TILEOPS_C_API tileops_status* tileops_params_set_dtype(tileops_params* params, const char* name, const char* dtype);
TILEOPS_C_API tileops_status* tileops_params_set_device(tileops_params* params, const char* name, const char* device);
TILEOPS_C_API tileops_status* tileops_params_set_int_list(tileops_params* params, const char* name,
                                                          const int64_t* values, size_t count);
TILEOPS_C_API tileops_status* tileops_params_set_tensor(tileops_params* params, const char* name,
                                                        const tileops_tensor* tensor);

/* ---- Ops --------------------------------------------------------------------------------- */

typedef struct tileops_op tileops_op;

/* Constructs in-tree op `op_name` (its manifest key, "RMSNormFwdOp") from `params` (NULL: none;
   missing parameters take the manifest's defaults) with target `target` (NULL: the process
   default, else detection; "builtin", "reference" or a registered target's name). Errors as
   the C++ construction: ValueError for an unknown op, TypeError for an unknown, missing or
   ill-typed parameter, ValueError for a failed refinement. */
TILEOPS_C_API tileops_status* tileops_op_create(const char* op_name, const tileops_params* params, const char* target,
                                                tileops_op** op);
TILEOPS_C_API void tileops_op_free(tileops_op* op);
/* The instance key ("RMSNormFwdOp#3"): unique in the process and never reused; valid while the
   op lives. */
TILEOPS_C_API tileops_status* tileops_op_instance_key(const tileops_op* op, const char** key);
/* The boundary operator ("tileops::norm_rms_norm_fwd") a call of `op` enters by when it passes
   the inputs whose `present` flags (one per manifest input, `num_inputs` of them) are nonzero
   and, when `out_passed` is nonzero, an `out` buffer. `*name` is static. TypeError when the op
   has no compile boundary, the count is not the op's input count, a required input is absent,
   or `out` is passed to an op that takes none. */
TILEOPS_C_API tileops_status* tileops_op_boundary_operator(const tileops_op* op, const uint8_t* present,
                                                           size_t num_inputs, int32_t out_passed, const char** name);
/* `*json`: the record of the op's last completed call {op, indices, branch_key, device, tensors,
   traffic, written, has_out, kernels, stages, roofline}; `kernels` lists the kernel keys (or the
   target's name) that served it; `roofline` is {flops, bytes} of the call from the manifest's
   roofline (since API 1.1). RuntimeError before any call completed. */
TILEOPS_C_API tileops_status* tileops_op_last_call_json(const tileops_op* op, char** json);
/* `*json`: {name, instance_key, target, serving_target, params, kernels: [{op, stage,
   interface, key}], caches: [{op, stage, calls, target_kernels}]} of this instance. */
TILEOPS_C_API tileops_status* tileops_op_json(const tileops_op* op, char** json);

/* How a tensor crosses tileops_op_call (tileops_tensor_ref.kind). */
#define TILEOPS_REF_NONE 0              /* absent (an optional input not passed, no `out`) */
#define TILEOPS_REF_TENSOR 1            /* ptr: a tileops_tensor*, borrowed */
#define TILEOPS_REF_DLPACK 2            /* ptr: a DLManagedTensor*, whose ownership passes */
#define TILEOPS_REF_DLPACK_VERSIONED 3  /* ptr: a DLManagedTensorVersioned*, likewise */
/* ptr: a DLTensor* lent for the span of the call, inputs, `out` and output buffers only (since
   API 1.2). tileops reads the struct and uses its memory until tileops_op_call returns (work
   queued on the call's stream included, as for any tensor), keeps no reference to either after
   that and frees neither; the caller keeps both alive and unchanged meanwhile. No output views
   lent memory except an input the call wrote, `out` and an output buffer (the call refuses a
   new output that shares an input's storage). Flags: TILEOPS_DLPACK_READ_ONLY,
   TILEOPS_DLPACK_UINT8_AS_BOOL. The cheapest way in: no ownership changes hands. */
#define TILEOPS_REF_DLTENSOR 4

typedef struct tileops_tensor_ref {
  int32_t kind;    /* TILEOPS_REF_* */
  uint32_t flags;  /* TILEOPS_DLPACK_* flags of the import (inputs) or export (outputs) */
  void* ptr;
} tileops_tensor_ref;

/* Where an output came from (tileops_call.output_sources). */
#define TILEOPS_OUTPUT_NEW (-1)     /* a new tensor */
#define TILEOPS_OUTPUT_OUT (-2)     /* the `out` buffer */
#define TILEOPS_OUTPUT_BUFFER (-3)  /* the output buffer given for it */
/* 0, 1, ...: that input itself (an input the call wrote, returned as the output) */

typedef struct tileops_call {
  size_t struct_size;
  /* One ref per manifest input, in order (TILEOPS_REF_NONE for an optional input not passed). */
  size_t num_inputs;
  const tileops_tensor_ref* inputs;
  /* The `out` buffer of an op whose output declares `buffer: out`, or TILEOPS_REF_NONE. */
  tileops_tensor_ref out;
  /* One ref per manifest output. On entry each kind names the form wanted: TILEOPS_REF_TENSOR
     (a new handle), TILEOPS_REF_DLPACK or TILEOPS_REF_DLPACK_VERSIONED (an export owned by the
     caller), or TILEOPS_REF_NONE (not wanted); flags are export flags. On success ptr is set for
     each new output, and NULL for a null output and for an output that is one of the call's
     own tensors (an input it wrote, `out`, an output buffer: output_sources says which); on
     failure every ptr is NULL. */
  size_t num_outputs;
  tileops_tensor_ref* outputs;
  /* NULL, or one ref per output: memory the output is written to (TILEOPS_REF_NONE: none).
     The output that declares `buffer: out` takes its buffer as `out` (the kernel writes it);
     any other output is copied into its buffer on its device after the kernel ran, in the
     current stream's order. A buffer must have the output's shape, dtype and device
     (ValueError naming both). The output returned is then the buffer. */
  const tileops_tensor_ref* output_buffers;
  /* NULL, or num_outputs entries set to TILEOPS_OUTPUT_* or an input's position. */
  int32_t* output_sources;
  /* When use_stream is nonzero, `stream` (a native handle: cudaStream_t, hipStream_t; NULL the
     default stream) is the calling thread's current stream of `stream_device` (DLPack codes:
     kDLCUDA, kDLROCM, kDLCPU) for the call and the copies, and the previous one after it. */
  int32_t use_stream;
  DLDevice stream_device;
  void* stream;
} tileops_call;

/* Calls `op` (Op::call: the signature check, dispatch, the kernel, the record). Every DLPack
   ref in inputs, out and output_buffers is taken over (see the conventions), even when the call
   fails. Tensors on "meta" make a meta call: the signature check and the outputs' shapes and
   dtypes, nothing run. Errors as the C++ call (TypeError for a dtype outside the declared set
   or a missing input, ValueError for a shape that does not match, ...), plus TypeError for a
   malformed `call` (counts that differ from the op's inputs and outputs, an unknown ref kind,
   a NULL ptr for a ref that is not NONE). */
TILEOPS_C_API tileops_status* tileops_op_call(tileops_op* op, tileops_call* call);

/* ---- Streams ----------------------------------------------------------------------------- */

/* The calling thread's current stream of `device` ("cuda:0") as a native handle; NULL is the
   default stream (and the only one of cpu and meta). OpNotAvailableError when no runtime serves
   the device type. */
TILEOPS_C_API tileops_status* tileops_current_stream(const char* device, void** stream);
/* Makes `stream` the calling thread's current stream of `device` and stores the one it
   replaces in `*previous` (may be NULL), which the caller restores the same way. `stream` must
   belong to the device and outlive every tensor allocated while it is current. ValueError for
   a non-NULL stream on a device without streams or a device index the runtime lacks. */
TILEOPS_C_API tileops_status* tileops_set_current_stream(const char* device, void* stream, void** previous);
/* Waits until device `device` ("cuda:0") has finished all work queued on it, on every stream.
   ValueError for a malformed device or an index the runtime lacks (both named), and
   OpNotAvailableError when no runtime serves the device type. Since API 1.1. */
TILEOPS_C_API tileops_status* tileops_synchronize(const char* device);

#ifdef __cplusplus
}
#endif

#endif
