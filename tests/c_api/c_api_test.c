/* The C API from C: statuses, versions, DLPack ownership, parameters, calls (plain, strided,
   meta, in place, with out and output buffers), boundary operators, JSON and streams. Each
   check prints what failed; the exit status is the number of failed checks (capped). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tileops/c_api.h"

static int failures = 0;

#define CHECK(cond)                                                       \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                         \
    }                                                                     \
  } while (0)

/* Checks that `status` is an error of `kind` whose message contains `part`, and frees it. */
static void expect_error(tileops_status* status, int kind, const char* part, int line) {
  if (status == NULL) {
    fprintf(stderr, "line %d: expected %s, got success\n", line, tileops_error_kind_name(kind));
    ++failures;
    return;
  }
  if (tileops_status_kind(status) != kind || strstr(tileops_status_message(status), part) == NULL) {
    fprintf(stderr, "line %d: expected %s containing \"%s\", got %s: %s\n", line, tileops_error_kind_name(kind), part,
            tileops_error_kind_name(tileops_status_kind(status)), tileops_status_message(status));
    ++failures;
  }
  tileops_status_free(status);
}
#define EXPECT_ERROR(call, kind, part) expect_error((call), (kind), (part), __LINE__)

/* Checks success, printing the error otherwise. */
static int expect_ok(tileops_status* status, int line) {
  if (status == NULL) return 1;
  fprintf(stderr, "line %d: unexpected %s: %s\n", line, tileops_error_kind_name(tileops_status_kind(status)),
          tileops_status_message(status));
  ++failures;
  tileops_status_free(status);
  return 0;
}
#define OK(call) expect_ok((call), __LINE__)

/* ---- A producer of DLPack tensors over host arrays, counting its deleter's calls ---------- */

typedef struct {
  int64_t shape[4];
  int64_t strides[4];
  int deleted;
} Producer;

static void delete_legacy(DLManagedTensor* self) { ++((Producer*)self->manager_ctx)->deleted; }
static void delete_versioned(DLManagedTensorVersioned* self) { ++((Producer*)self->manager_ctx)->deleted; }

static DLTensor host_tensor(Producer* p, void* data, int ndim, const int64_t* shape, const int64_t* strides,
                            uint8_t code, uint8_t bits) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  memcpy(p->shape, shape, sizeof(int64_t) * (size_t)ndim);
  if (strides != NULL) memcpy(p->strides, strides, sizeof(int64_t) * (size_t)ndim);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.device.device_id = 0;
  t.ndim = ndim;
  t.dtype.code = code;
  t.dtype.bits = bits;
  t.dtype.lanes = 1;
  t.shape = p->shape;
  t.strides = strides != NULL ? p->strides : NULL;
  return t;
}

static DLManagedTensor legacy(Producer* p, float* data, int ndim, const int64_t* shape, const int64_t* strides) {
  DLManagedTensor m;
  m.dl_tensor = host_tensor(p, data, ndim, shape, strides, kDLFloat, 32);
  m.manager_ctx = p;
  m.deleter = delete_legacy;
  return m;
}

static DLManagedTensorVersioned versioned(Producer* p, void* data, int ndim, const int64_t* shape, uint8_t code,
                                          uint8_t bits, uint64_t flags) {
  DLManagedTensorVersioned m;
  m.version.major = 1;
  m.version.minor = 0;
  m.dl_tensor = host_tensor(p, data, ndim, shape, NULL, code, bits);
  m.manager_ctx = p;
  m.deleter = delete_versioned;
  m.flags = flags;
  return m;
}

static tileops_tensor_ref ref(int kind, void* ptr) {
  tileops_tensor_ref r;
  r.kind = kind;
  r.flags = 0;
  r.ptr = ptr;
  return r;
}

static tileops_call make_call(size_t num_inputs, const tileops_tensor_ref* inputs, size_t num_outputs,
                              tileops_tensor_ref* outputs) {
  tileops_call c;
  memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  c.num_inputs = num_inputs;
  c.inputs = inputs;
  c.num_outputs = num_outputs;
  c.outputs = outputs;
  return c;
}

static tileops_op* make_rms_norm(int64_t n) {
  tileops_params* params = NULL;
  tileops_op* op = NULL;
  OK(tileops_params_create(&params));
  OK(tileops_params_set_int_list(params, "normalized_shape", &n, 1));
  OK(tileops_params_set_float(params, "eps", 1e-5));
  OK(tileops_op_create("RMSNormFwdOp", params, "reference", &op));
  tileops_params_free(params);
  return op;
}

static tileops_op* make_op(const char* name, const char* bool_param, int value) {
  tileops_params* params = NULL;
  tileops_op* op = NULL;
  OK(tileops_params_create(&params));
  if (bool_param != NULL) OK(tileops_params_set_bool(params, bool_param, value));
  OK(tileops_op_create(name, params, NULL, &op));
  tileops_params_free(params);
  return op;
}

/* The RMS norm of one row of n values, times weight. */
static void rms_norm_row(const float* x, const float* w, int64_t n, int64_t step, float* y) {
  double sum = 0;
  for (int64_t j = 0; j < n; ++j) sum += (double)x[j * step] * x[j * step];
  const double scale = 1.0 / sqrt(sum / (double)n + 1e-5);
  for (int64_t j = 0; j < n; ++j) y[j] = (float)(x[j * step] * scale * w[j]);
}

static int close_to(float a, float b) { return fabsf(a - b) <= 1e-5f * (1.0f + fabsf(b)); }

/* ---- The tests ------------------------------------------------------------------------- */

static void test_errors_and_version(void) {
  tileops_version_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  if (OK(tileops_get_version(&info))) {
    CHECK(info.api_major == TILEOPS_C_API_VERSION_MAJOR);
    CHECK(info.api_minor == TILEOPS_C_API_VERSION_MINOR);
    CHECK(strcmp(info.library, TILEOPS_TEST_VERSION) == 0);
  }
  info.struct_size = sizeof(size_t);
  EXPECT_ERROR(tileops_get_version(&info), TILEOPS_TYPE_ERROR, "tileops_version_info.struct_size is 8");

  CHECK(tileops_status_kind(NULL) == TILEOPS_OK);
  CHECK(strcmp(tileops_status_message(NULL), "") == 0);
  CHECK(strcmp(tileops_error_kind_name(TILEOPS_OUT_OF_MEMORY_ERROR), "OutOfMemoryError") == 0);
  CHECK(strcmp(tileops_error_kind_name(TILEOPS_MANIFEST_ERROR), "ManifestError") == 0);
  CHECK(tileops_error_kind_name(TILEOPS_ERROR_KIND_COUNT) == NULL);
  CHECK(tileops_error_kind_name(-1) == NULL);
  CHECK(tileops_error_kind_parent(TILEOPS_OUT_OF_MEMORY_ERROR) == TILEOPS_RUNTIME_ERROR);
  CHECK(tileops_error_kind_parent(TILEOPS_CONFIG_ERROR) == TILEOPS_VALUE_ERROR);
  CHECK(tileops_error_kind_parent(TILEOPS_UNKNOWN_TARGET_ERROR) == TILEOPS_VALUE_ERROR);
  CHECK(tileops_error_kind_parent(TILEOPS_TYPE_ERROR) == TILEOPS_ERROR);
  CHECK(tileops_error_kind_parent(TILEOPS_ERROR) == TILEOPS_OK);

  tileops_op* op = NULL;
  EXPECT_ERROR(tileops_op_create(NULL, NULL, NULL, &op), TILEOPS_TYPE_ERROR, "op_name is NULL");
  EXPECT_ERROR(tileops_op_create("NoSuchOp", NULL, NULL, &op), TILEOPS_VALUE_ERROR, "unknown op 'NoSuchOp'; known ops:");
  CHECK(op == NULL);
  char long_name[TILEOPS_MAX_NAME_LENGTH + 2];
  memset(long_name, 'a', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  EXPECT_ERROR(tileops_op_create(long_name, NULL, NULL, &op), TILEOPS_VALUE_ERROR, "op_name is longer than 4096 bytes");
  EXPECT_ERROR(tileops_op_create("RMSNormFwdOp", NULL, "no_such_target", &op), TILEOPS_TYPE_ERROR,
               "missing required parameter 'normalized_shape'");
}

static void test_params(void) {
  tileops_params* params = NULL;
  tileops_op* op = NULL;
  OK(tileops_params_create(&params));
  EXPECT_ERROR(tileops_params_set_bool(params, "inplace", 2), TILEOPS_VALUE_ERROR, "a bool is 0 or 1, not 2");
  EXPECT_ERROR(tileops_params_set_float(params, "eps", NAN), TILEOPS_VALUE_ERROR, "'eps' is NaN");
  EXPECT_ERROR(tileops_params_set_dtype(params, "dtype", "float31"), TILEOPS_VALUE_ERROR, "float31");
  EXPECT_ERROR(tileops_params_set_int(params, "", 1), TILEOPS_VALUE_ERROR, "a parameter name is empty");
  EXPECT_ERROR(tileops_params_set_int_list(params, "normalized_shape", NULL, 2), TILEOPS_TYPE_ERROR, "values is NULL");

  OK(tileops_params_set_int(params, "no_such", 1));
  EXPECT_ERROR(tileops_op_create("SoftmaxFwdOp", params, NULL, &op), TILEOPS_TYPE_ERROR, "unknown parameter 'no_such'");
  tileops_params_free(params);

  OK(tileops_params_create(&params));
  OK(tileops_params_set_string(params, "dim", "last"));
  EXPECT_ERROR(tileops_op_create("SoftmaxFwdOp", params, NULL, &op), TILEOPS_TYPE_ERROR, "dim");
  tileops_params_free(params);

  OK(tileops_params_create(&params));
  OK(tileops_params_set_string(params, "approximate", "cubic"));
  EXPECT_ERROR(tileops_op_create("GeluFwdOp", params, NULL, &op), TILEOPS_VALUE_ERROR,
               "approximate must be 'none' (erf) or 'tanh'");
  tileops_params_free(params);

  OK(tileops_params_create(&params));
  OK(tileops_params_set_dtype(params, "dtype", "float32"));
  OK(tileops_params_set_none(params, "dim"));
  OK(tileops_op_create("SumFwdOp", params, NULL, &op));
  CHECK(op != NULL);
  tileops_op_free(op);
  tileops_params_free(params);
}

static void test_rms_norm_call(void) {
  enum { ROWS = 3, N = 8 };
  float x[ROWS * N], w[N], expected[ROWS * N];
  for (int i = 0; i < ROWS * N; ++i) x[i] = (float)(i % 7) - 2.5f;
  for (int j = 0; j < N; ++j) w[j] = 0.5f + 0.125f * (float)j;
  for (int r = 0; r < ROWS; ++r) rms_norm_row(x + r * N, w, N, 1, expected + r * N);

  tileops_op* op = make_rms_norm(N);
  const char* key = NULL;
  OK(tileops_op_instance_key(op, &key));
  CHECK(key != NULL && strncmp(key, "RMSNormFwdOp#", 13) == 0);
  char* json = NULL;
  EXPECT_ERROR(tileops_op_last_call_json(op, &json), TILEOPS_RUNTIME_ERROR, "no call has completed yet");

  Producer px = {{0}, {0}, 0}, pw = {{0}, {0}, 0};
  const int64_t x_shape[2] = {ROWS, N}, w_shape[1] = {N};
  DLManagedTensor mx = legacy(&px, x, 2, x_shape, NULL), mw = legacy(&pw, w, 1, w_shape, NULL);
  tileops_tensor_ref inputs[2] = {ref(TILEOPS_REF_DLPACK, &mx), ref(TILEOPS_REF_DLPACK, &mw)};
  tileops_tensor_ref outputs[1] = {ref(TILEOPS_REF_DLPACK, NULL)};
  int32_t sources[1] = {99};
  tileops_call call = make_call(2, inputs, 1, outputs);
  call.output_sources = sources;
  if (OK(tileops_op_call(op, &call))) {
    DLManagedTensor* y = (DLManagedTensor*)outputs[0].ptr;
    CHECK(sources[0] == TILEOPS_OUTPUT_NEW);
    CHECK(y->dl_tensor.ndim == 2 && y->dl_tensor.shape[0] == ROWS && y->dl_tensor.shape[1] == N);
    CHECK(y->dl_tensor.dtype.code == kDLFloat && y->dl_tensor.dtype.bits == 32);
    const float* values = (const float*)y->dl_tensor.data;
    int all_close = 1;
    for (int i = 0; i < ROWS * N; ++i) all_close &= close_to(values[i], expected[i]);
    CHECK(all_close);
    CHECK(px.deleted == 1 && pw.deleted == 1);
    y->deleter(y);
  }

  if (OK(tileops_op_last_call_json(op, &json))) {
    CHECK(strstr(json, "\"op\":\"RMSNormFwdOp\"") != NULL);
    CHECK(strstr(json, "\"kernels\":[\"rms_norm_reference\"]") != NULL);
    /* The manifest's roofline: 4 FLOPs an element with a weight; x and w read, y written. */
    CHECK(strstr(json, "\"roofline\":{\"bytes\":224.0,\"flops\":96.0}") != NULL);
    tileops_string_free(json);
  }
  if (OK(tileops_op_json(op, &json))) {
    CHECK(strstr(json, "\"serving_target\":\"reference\"") != NULL);
    CHECK(strstr(json, "\"normalized_shape\":[8]") != NULL);
    tileops_string_free(json);
  }

  /* A mismatching weight: the signature error, and both tensors released. */
  Producer bad = {{0}, {0}, 0};
  px.deleted = 0;
  const int64_t bad_shape[1] = {N - 1};
  mx = legacy(&px, x, 2, x_shape, NULL);
  mw = legacy(&bad, w, 1, bad_shape, NULL);
  inputs[0] = ref(TILEOPS_REF_DLPACK, &mx);
  inputs[1] = ref(TILEOPS_REF_DLPACK, &mw);
  EXPECT_ERROR(tileops_op_call(op, &call), TILEOPS_VALUE_ERROR,
               "RMSNormFwdOp: input 'weight' shape [7] does not match [*normalized_shape] = [8]");
  CHECK(px.deleted == 1 && bad.deleted == 1);
  CHECK(outputs[0].ptr == NULL);

  /* A malformed call still releases every DLPack ref it was given. */
  px.deleted = 0;
  mx = legacy(&px, x, 2, x_shape, NULL);
  inputs[0] = ref(TILEOPS_REF_DLPACK, &mx);
  tileops_call short_call = make_call(1, inputs, 1, outputs);
  EXPECT_ERROR(tileops_op_call(op, &short_call), TILEOPS_TYPE_ERROR, "RMSNormFwdOp takes 2 input ref(s), got 1");
  CHECK(px.deleted == 1);
  px.deleted = 0;
  mx = legacy(&px, x, 2, x_shape, NULL);
  inputs[0] = ref(TILEOPS_REF_DLPACK, &mx);
  inputs[1] = ref(7, &mw);
  EXPECT_ERROR(tileops_op_call(op, &call), TILEOPS_TYPE_ERROR, "ref kind 7 is none of");
  CHECK(px.deleted == 1);
  call.struct_size = sizeof call + 8;
  EXPECT_ERROR(tileops_op_call(op, &call), TILEOPS_TYPE_ERROR, "needs a newer library");
  tileops_op_free(op);
}

static void test_strided_view(void) {
  /* Every other column of a [2, 8] array: a [2, 4] view with strides [8, 2]. */
  enum { N = 4 };
  float base[2 * 2 * N], w[N] = {1, 1, 1, 1}, expected[2 * N];
  for (int i = 0; i < 4 * N; ++i) base[i] = (float)i * 0.25f - 1.0f;
  for (int r = 0; r < 2; ++r) rms_norm_row(base + r * 2 * N, w, N, 2, expected + r * N);
  tileops_op* op = make_rms_norm(N);
  Producer px = {{0}, {0}, 0};
  const int64_t shape[2] = {2, N}, strides[2] = {2 * N, 2};
  DLManagedTensor mx = legacy(&px, base, 2, shape, strides);
  tileops_tensor_ref inputs[2] = {ref(TILEOPS_REF_DLPACK, &mx), ref(TILEOPS_REF_NONE, NULL)};
  tileops_tensor_ref outputs[1] = {ref(TILEOPS_REF_TENSOR, NULL)};
  tileops_call call = make_call(2, inputs, 1, outputs);
  if (OK(tileops_op_call(op, &call))) {
    tileops_tensor_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    OK(tileops_tensor_get_info((tileops_tensor*)outputs[0].ptr, &info));
    CHECK(info.ndim == 2 && info.shape[0] == 2 && info.shape[1] == N && info.strides[0] == N);
    const float* y = (const float*)info.data;
    int all_close = 1;
    for (int i = 0; i < 2 * N; ++i) all_close &= close_to(y[i], expected[i]);
    CHECK(all_close);
    tileops_tensor_free((tileops_tensor*)outputs[0].ptr);
  }
  CHECK(px.deleted == 1);
  tileops_op_free(op);
}

static void test_meta_call(void) {
  tileops_op* op = make_rms_norm(4096);
  const int64_t x_shape[3] = {2, 5, 4096}, w_shape[1] = {4096};
  tileops_tensor *x = NULL, *w = NULL;
  OK(tileops_tensor_empty(x_shape, NULL, 3, "bfloat16", "meta", &x));
  OK(tileops_tensor_empty(w_shape, NULL, 1, "bfloat16", "meta", &w));
  tileops_tensor_ref inputs[2] = {ref(TILEOPS_REF_TENSOR, x), ref(TILEOPS_REF_TENSOR, w)};
  tileops_tensor_ref outputs[1] = {ref(TILEOPS_REF_TENSOR, NULL)};
  tileops_call call = make_call(2, inputs, 1, outputs);
  if (OK(tileops_op_call(op, &call))) {
    tileops_tensor_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    OK(tileops_tensor_get_info((tileops_tensor*)outputs[0].ptr, &info));
    CHECK(strcmp(info.dtype, "bfloat16") == 0 && strcmp(info.device_type, "meta") == 0);
    CHECK(info.ndim == 3 && info.shape[0] == 2 && info.shape[1] == 5 && info.shape[2] == 4096);
    CHECK(info.data == NULL);
    tileops_tensor_free((tileops_tensor*)outputs[0].ptr);
  }
  tileops_tensor* f32 = NULL;
  OK(tileops_tensor_empty(w_shape, NULL, 1, "float32", "meta", &f32));
  inputs[1] = ref(TILEOPS_REF_TENSOR, f32);
  EXPECT_ERROR(tileops_op_call(op, &call), TILEOPS_TYPE_ERROR, "weight");
  tileops_tensor_free(f32);
  tileops_tensor_free(x);
  tileops_tensor_free(w);

  tileops_tensor* t = NULL;
  const int64_t bad[1] = {-1};
  EXPECT_ERROR(tileops_tensor_empty(bad, NULL, 1, "float32", "meta", &t), TILEOPS_VALUE_ERROR, "[-1]");
  EXPECT_ERROR(tileops_tensor_empty(x_shape, NULL, 65, "float32", "meta", &t), TILEOPS_VALUE_ERROR,
               "ndim 65 is outside 0 to 64");
  EXPECT_ERROR(tileops_tensor_empty(x_shape, NULL, 1, "float32", "nowhere:x", &t), TILEOPS_VALUE_ERROR, "nowhere:x");
  const int64_t strides[3] = {1, 2, 10};
  if (OK(tileops_tensor_empty(x_shape, strides, 3, "float32", "cpu", &t))) {
    tileops_tensor_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    OK(tileops_tensor_get_info(t, &info));
    CHECK(info.strides[0] == 1 && info.strides[1] == 2 && info.strides[2] == 10);
    tileops_tensor_free(t);
  }
  tileops_op_free(op);
}

static void test_in_place_and_read_only(void) {
  float data[4] = {-1, 2, -3, 4};
  const int64_t shape[1] = {4};
  tileops_op* relu = make_op("ReluFwdOp", "inplace", 1);
  Producer p = {{0}, {0}, 0};
  DLManagedTensorVersioned m = versioned(&p, data, 1, shape, kDLFloat, 32, 0);
  tileops_tensor_ref inputs[1] = {ref(TILEOPS_REF_DLPACK_VERSIONED, &m)};
  tileops_tensor_ref outputs[1] = {ref(TILEOPS_REF_NONE, NULL)};
  int32_t sources[1] = {99};
  tileops_call call = make_call(1, inputs, 1, outputs);
  call.output_sources = sources;
  if (OK(tileops_op_call(relu, &call))) {
    CHECK(sources[0] == 0);
    CHECK(outputs[0].ptr == NULL);
    CHECK(data[0] == 0 && data[1] == 2 && data[2] == 0 && data[3] == 4);
  }
  CHECK(p.deleted == 1);

  p.deleted = 0;
  m = versioned(&p, data, 1, shape, kDLFloat, 32, DLPACK_FLAG_BITMASK_READ_ONLY);
  inputs[0] = ref(TILEOPS_REF_DLPACK_VERSIONED, &m);
  EXPECT_ERROR(tileops_op_call(relu, &call), TILEOPS_VALUE_ERROR, "input 'input' is read-only");
  CHECK(p.deleted == 1);

  const char* name = NULL;
  const uint8_t present[1] = {1};
  if (OK(tileops_op_boundary_operator(relu, present, 1, 0, &name))) {
    CHECK(strcmp(name, "tileops::elementwise_relu_fwd_writes_input") == 0);
  }
  EXPECT_ERROR(tileops_op_boundary_operator(relu, present, 2, 0, &name), TILEOPS_TYPE_ERROR,
               "ReluFwdOp takes 1 input presence flag(s), got 2");
  EXPECT_ERROR(tileops_op_boundary_operator(relu, present, 1, 1, &name), TILEOPS_TYPE_ERROR,
               "takes no 'out' buffer, but one was passed");
  tileops_op_free(relu);

  tileops_op* copy_relu = make_op("ReluFwdOp", "inplace", 0);
  if (OK(tileops_op_boundary_operator(copy_relu, present, 1, 0, &name))) {
    CHECK(strcmp(name, "tileops::elementwise_relu_fwd") == 0);
  }
  const uint8_t absent[1] = {0};
  EXPECT_ERROR(tileops_op_boundary_operator(copy_relu, absent, 1, 0, &name), TILEOPS_TYPE_ERROR,
               "input 'input' is required but was not passed");
  tileops_op_free(copy_relu);
}

static void test_out_and_output_buffers(void) {
  float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, out[4] = {0}, buffer[4] = {0};
  const int64_t shape[1] = {4};
  tileops_op* add = make_op("AddFwdOp", NULL, 0);
  Producer pa = {{0}, {0}, 0}, pb = {{0}, {0}, 0}, po = {{0}, {0}, 0};
  DLManagedTensor ma = legacy(&pa, a, 1, shape, NULL), mb = legacy(&pb, b, 1, shape, NULL),
                  mo = legacy(&po, out, 1, shape, NULL);
  tileops_tensor_ref inputs[2] = {ref(TILEOPS_REF_DLPACK, &ma), ref(TILEOPS_REF_DLPACK, &mb)};
  tileops_tensor_ref outputs[1] = {ref(TILEOPS_REF_NONE, NULL)};
  int32_t sources[1] = {99};
  tileops_call call = make_call(2, inputs, 1, outputs);
  call.out = ref(TILEOPS_REF_DLPACK, &mo);
  call.output_sources = sources;
  if (OK(tileops_op_call(add, &call))) {
    CHECK(sources[0] == TILEOPS_OUTPUT_OUT);
    CHECK(out[0] == 11 && out[3] == 44);
  }
  CHECK(pa.deleted == 1 && pb.deleted == 1 && po.deleted == 1);
  const char* name = NULL;
  const uint8_t present[2] = {1, 1};
  if (OK(tileops_op_boundary_operator(add, present, 2, 1, &name))) CHECK(strcmp(name, "tileops::elementwise_add_fwd_out") == 0);

  /* An output buffer of the `buffer: out` output becomes `out`. */
  pa.deleted = pb.deleted = po.deleted = 0;
  ma = legacy(&pa, a, 1, shape, NULL);
  mb = legacy(&pb, b, 1, shape, NULL);
  mo = legacy(&po, buffer, 1, shape, NULL);
  inputs[0] = ref(TILEOPS_REF_DLPACK, &ma);
  inputs[1] = ref(TILEOPS_REF_DLPACK, &mb);
  tileops_tensor_ref buffers[1] = {ref(TILEOPS_REF_DLPACK, &mo)};
  call.out = ref(TILEOPS_REF_NONE, NULL);
  call.output_buffers = buffers;
  if (OK(tileops_op_call(add, &call))) {
    CHECK(sources[0] == TILEOPS_OUTPUT_BUFFER);
    CHECK(buffer[0] == 11 && buffer[3] == 44);
  }
  CHECK(pa.deleted == 1 && pb.deleted == 1 && po.deleted == 1);
  tileops_op_free(add);

  /* Any other output is copied into its buffer; a buffer of another shape is refused. */
  enum { N = 4 };
  float x[N] = {1, -2, 3, -4}, y[N] = {0}, expected[N], ones[N] = {1, 1, 1, 1};
  rms_norm_row(x, ones, N, 1, expected);
  tileops_op* norm = make_rms_norm(N);
  Producer px = {{0}, {0}, 0}, py = {{0}, {0}, 0};
  const int64_t x_shape[2] = {1, N};
  DLManagedTensor mx = legacy(&px, x, 2, x_shape, NULL), my = legacy(&py, y, 2, x_shape, NULL);
  tileops_tensor_ref norm_inputs[2] = {ref(TILEOPS_REF_DLPACK, &mx), ref(TILEOPS_REF_NONE, NULL)};
  tileops_tensor_ref norm_buffers[1] = {ref(TILEOPS_REF_DLPACK, &my)};
  tileops_call norm_call = make_call(2, norm_inputs, 1, outputs);
  norm_call.output_buffers = norm_buffers;
  norm_call.output_sources = sources;
  if (OK(tileops_op_call(norm, &norm_call))) {
    CHECK(sources[0] == TILEOPS_OUTPUT_BUFFER);
    int all_close = 1;
    for (int i = 0; i < N; ++i) all_close &= close_to(y[i], expected[i]);
    CHECK(all_close);
  }
  CHECK(px.deleted == 1 && py.deleted == 1);
  px.deleted = py.deleted = 0;
  mx = legacy(&px, x, 2, x_shape, NULL);
  my = legacy(&py, y, 1, shape, NULL);
  norm_inputs[0] = ref(TILEOPS_REF_DLPACK, &mx);
  norm_buffers[0] = ref(TILEOPS_REF_DLPACK, &my);
  EXPECT_ERROR(tileops_op_call(norm, &norm_call), TILEOPS_VALUE_ERROR,
               "the buffer of output 'y' is float32[4] on cpu, but the output is float32[1, 4] on cpu");
  CHECK(px.deleted == 1 && py.deleted == 1);
  tileops_op_free(norm);
}

static void test_bool_dlpack(void) {
  uint8_t flags[3] = {1, 0, 1};
  const int64_t shape[1] = {3};
  Producer p = {{0}, {0}, 0};
  DLManagedTensor m;
  m.dl_tensor = host_tensor(&p, flags, 1, shape, NULL, kDLUInt, 8);
  m.manager_ctx = &p;
  m.deleter = delete_legacy;
  tileops_tensor* t = NULL;
  if (!OK(tileops_tensor_from_dlpack(&m, TILEOPS_DLPACK_UINT8_AS_BOOL, &t))) return;
  tileops_tensor_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  OK(tileops_tensor_get_info(t, &info));
  CHECK(strcmp(info.dtype, "bool") == 0);

  DLManagedTensor* legacy_out = NULL;
  EXPECT_ERROR(tileops_tensor_to_dlpack(t, 0, &legacy_out), TILEOPS_TYPE_ERROR, "bool has no code in DLPack 0.x");
  if (OK(tileops_tensor_to_dlpack(t, TILEOPS_DLPACK_LEGACY_BOOL, &legacy_out))) {
    CHECK(legacy_out->dl_tensor.dtype.code == 6 && legacy_out->dl_tensor.dtype.bits == 8);
    CHECK(legacy_out->dl_tensor.data == (void*)flags);
    legacy_out->deleter(legacy_out);
  }
  DLManagedTensorVersioned* versioned_out = NULL;
  EXPECT_ERROR(tileops_tensor_to_dlpack_versioned(t, 0, 8, 0, &versioned_out), TILEOPS_TYPE_ERROR, "use to_dlpack");
  if (OK(tileops_tensor_to_dlpack_versioned(t, 1, 3, TILEOPS_DLPACK_READ_ONLY, &versioned_out))) {
    CHECK(versioned_out->dl_tensor.dtype.code == 6 && versioned_out->dl_tensor.dtype.bits == 8);
    CHECK(versioned_out->version.major == 1 && (versioned_out->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
    /* Imported back: the read-only flag survives the round trip. */
    tileops_tensor* back = NULL;
    if (OK(tileops_tensor_from_dlpack_versioned(versioned_out, 0, &back))) {
      OK(tileops_tensor_get_info(back, &info));
      CHECK(info.read_only == 1 && strcmp(info.dtype, "bool") == 0 && info.data == (void*)flags);
      tileops_tensor_free(back);
    }
  }
  CHECK(p.deleted == 0);
  tileops_tensor_free(t);
  CHECK(p.deleted == 1);

  /* The flag on a tensor that is not uint8, and an unsupported dtype: errors that release. */
  float values[3] = {0};
  p.deleted = 0;
  DLManagedTensor f = legacy(&p, values, 1, shape, NULL);
  EXPECT_ERROR(tileops_tensor_from_dlpack(&f, TILEOPS_DLPACK_UINT8_AS_BOOL, &t), TILEOPS_TYPE_ERROR,
               "TILEOPS_DLPACK_UINT8_AS_BOOL is for uint8 tensors, not float32");
  CHECK(p.deleted == 1);
  p.deleted = 0;
  f = legacy(&p, values, 1, shape, NULL);
  f.dl_tensor.dtype.code = 5; /* complex */
  EXPECT_ERROR(tileops_tensor_from_dlpack(&f, 0, &t), TILEOPS_TYPE_ERROR, "unsupported DLPack dtype (code 5");
  CHECK(p.deleted == 1);
  p.deleted = 0;
  DLManagedTensorVersioned v2 = versioned(&p, values, 1, shape, kDLFloat, 32, 0);
  v2.version.major = 2;
  EXPECT_ERROR(tileops_tensor_from_dlpack_versioned(&v2, 0, &t), TILEOPS_VALUE_ERROR, "2");
  CHECK(p.deleted == 1);
}

static void test_json_and_streams(void) {
  char* json = NULL;
  if (OK(tileops_workloads_json("RMSNormFwdOp", 64, &json))) {
    CHECK(strstr(json, "\"id\":\"llama-8b-prefill-float16\"") != NULL);
    CHECK(strstr(json, "\"inputs\":[{\"device\":\"cpu\",\"dtype\":\"float16\",\"name\":\"x\",\"shape\":[64,4096]}") != NULL);
    CHECK(strstr(json, "\"normalized_shape\":[4096]") != NULL);
    tileops_string_free(json);
  }
  EXPECT_ERROR(tileops_workloads_json("RMSNormFwdOp", -1, &json), TILEOPS_VALUE_ERROR, "index_cap -1 is negative");
  if (OK(tileops_ops_json(NULL, &json))) {
    CHECK(strstr(json, "\"name\":\"RMSNormFwdOp\"") != NULL);
    CHECK(strstr(json, "\"name\":\"tileops::norm_rms_norm_fwd\"") != NULL);
    tileops_string_free(json);
  }
  if (OK(tileops_ops_json("AddFwdOp", &json))) {
    CHECK(json[0] == '{' && strstr(json, "\"buffer\":\"out\"") != NULL);
    tileops_string_free(json);
  }
  EXPECT_ERROR(tileops_ops_json("Nope", &json), TILEOPS_VALUE_ERROR, "unknown op 'Nope'");
  if (OK(tileops_info_json(&json))) {
    CHECK(strstr(json, "\"version\":\"" TILEOPS_TEST_VERSION "\"") != NULL);
    CHECK(strstr(json, "\"devices\":[") != NULL);
    tileops_string_free(json);
  }
  if (OK(tileops_plugins_json(&json))) {
    CHECK(strstr(json, "\"name\":\"cpu\"") != NULL);
    tileops_string_free(json);
  }
  if (OK(tileops_targets_json(&json))) {
    CHECK(json[0] == '[');
    tileops_string_free(json);
  }

  void* stream = (void*)1;
  if (OK(tileops_current_stream("cpu", &stream))) CHECK(stream == NULL);
  void* previous = (void*)1;
  EXPECT_ERROR(tileops_set_current_stream("cpu", (void*)16, &previous), TILEOPS_VALUE_ERROR, "cpu");
  if (OK(tileops_set_current_stream("cpu", NULL, &previous))) CHECK(previous == NULL);
  EXPECT_ERROR(tileops_current_stream("acme:0", &stream), TILEOPS_OP_NOT_AVAILABLE_ERROR, "acme");
  EXPECT_ERROR(tileops_current_stream(NULL, &stream), TILEOPS_TYPE_ERROR, "device is NULL");

  OK(tileops_synchronize("cpu"));
  EXPECT_ERROR(tileops_synchronize("cpu:2"), TILEOPS_VALUE_ERROR, "cannot wait for cpu:2: the cpu runtime has 1 device(s)");
  EXPECT_ERROR(tileops_synchronize("acme:0"), TILEOPS_OP_NOT_AVAILABLE_ERROR, "acme");
}

/* The roofline picture of bench results: one point per measured row, the two ceilings, and
   errors naming the field that does not fit. */
static void test_roofline_svg(void) {
  const char* result = "{\"peak_gbps\": 10, \"peak_gflops\": 100, \"rows\": ["
                       "{\"op\": \"A\", \"case\": \"c1\", \"gbps\": 5, \"gflops\": 2, \"kernels\": [{\"key\": \"k<1>\"}]},"
                       "{\"op\": \"B\", \"case\": \"c2\", \"error\": \"failed\"}]}";
  char* svg = NULL;
  if (OK(tileops_roofline_svg(result, "cpu", &svg))) {
    CHECK(strncmp(svg, "<svg ", 5) == 0);
    CHECK(strstr(svg, "A c1 (k&lt;1&gt;)") != NULL);
    CHECK(strstr(svg, "B c2") == NULL);
    CHECK(strstr(svg, "100 GFLOP/s") != NULL && strstr(svg, "10 GB/s, cpu") != NULL);
    const char* first = strstr(svg, "class=\"row\"");
    CHECK(first != NULL && strstr(first + 1, "class=\"row\"") == NULL);
    tileops_string_free(svg);
  }
  EXPECT_ERROR(tileops_roofline_svg("{\"peak_gbps\": 0, \"rows\": []}", NULL, &svg), TILEOPS_VALUE_ERROR,
               "a positive finite number at peak_gbps, got 0");
  EXPECT_ERROR(tileops_roofline_svg("{\"peak_gbps\": 1, \"rows\": [{\"op\": 1}]}", NULL, &svg), TILEOPS_VALUE_ERROR,
               "a string at rows[0].op, got number");
  EXPECT_ERROR(tileops_roofline_svg("{", NULL, &svg), TILEOPS_VALUE_ERROR, "does not parse");
  CHECK(svg == NULL);
  EXPECT_ERROR(tileops_roofline_svg(NULL, NULL, &svg), TILEOPS_TYPE_ERROR, "bench_json is NULL");
  EXPECT_ERROR(tileops_roofline_svg("{}", NULL, NULL), TILEOPS_TYPE_ERROR, "svg is NULL");
}

int main(void) {
  test_errors_and_version();
  test_params();
  test_rms_norm_call();
  test_strided_view();
  test_meta_call();
  test_in_place_and_read_only();
  test_out_and_output_buffers();
  test_bool_dlpack();
  test_json_and_streams();
  test_roofline_svg();
  if (failures > 0) {
    fprintf(stderr, "c_api_test: %d check(s) failed\n", failures);
    return 1;
  }
  printf("c_api_test: all checks passed\n");
  return 0;
}
