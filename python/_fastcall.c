/* tileops._fastcall: one op call on torch tensors in C, the Python package's fast way in.

   Built against CPython's limited API (3.9 and later), so one build loads in every interpreter
   from 3.9 on. It links neither libtileops nor torch: setup() hands it the address of
   tileops_op_call and the torch functions it calls. A torch tensor crosses as the capsule of
   torch._C._to_dlpack, taken over by the C API (TILEOPS_REF_DLPACK); new outputs come back
   through torch._C._from_dlpack. What it does not take (anything but a plain torch tensor or
   nn.Parameter, too many tensors, a tensor torch will not export) it leaves to the ctypes path,
   answering NotImplemented before anything changed hands. */
#define Py_LIMITED_API 0x03090000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "tileops/c_api.h"

typedef tileops_status* (*op_call_fn)(tileops_op*, tileops_call*);

#define MAX_TENSORS 32
/* DLPack 0.8's code of bool, which Debian's DLPack 0.6 header does not name. */
#define kDLBoolCode 6

static op_call_fn op_call;
static PyObject* tensor_type;      /* torch.Tensor */
static PyObject* parameter_type;   /* torch.nn.Parameter */
static PyObject* to_dlpack;        /* torch._C._to_dlpack */
static PyObject* from_dlpack;      /* torch._C._from_dlpack */
static PyObject* is_grad_enabled;  /* torch.is_grad_enabled */
static PyObject* current_stream;   /* torch._C._cuda_getCurrentRawStream, or None */
static PyObject* bool_view;        /* tensor -> tensor.view(torch.bool), or None where torch reads kDLBool */
static PyObject* requires_grad_name;

static void set_ref(PyObject** slot, PyObject* value) {
  PyObject* old = *slot;
  Py_INCREF(value);
  *slot = value;
  Py_XDECREF(old);
}

static PyObject* new_ref(PyObject* o) {
  Py_INCREF(o);
  return o;
}

static PyObject* setup(PyObject* self, PyObject* args) {
  unsigned long long address;
  PyObject *tensor, *parameter, *to, *from, *grad, *stream, *as_bool;
  (void)self;
  if (!PyArg_ParseTuple(args, "KOOOOOOO", &address, &tensor, &parameter, &to, &from, &grad, &stream, &as_bool)) {
    return NULL;
  }
  op_call = (op_call_fn)(uintptr_t)address;
  set_ref(&tensor_type, tensor);
  set_ref(&parameter_type, parameter);
  set_ref(&to_dlpack, to);
  set_ref(&from_dlpack, from);
  set_ref(&is_grad_enabled, grad);
  set_ref(&current_stream, stream);
  set_ref(&bool_view, as_bool);
  Py_RETURN_NONE;
}

/* The capsules a call exported, released unless the C API took them over. */
typedef struct {
  PyObject* capsules[MAX_TENSORS];
  int count;
} Exports;

static void drop_exports(Exports* e) {
  for (int i = 0; i < e->count; ++i) Py_DECREF(e->capsules[i]);
  e->count = 0;
}

/* Exports `t` into `ref`: 1 done (or None: an absent tensor), 0 not a tensor this path takes,
   -1 a Python error. */
static int export_tensor(PyObject* t, int grad_on, Exports* e, tileops_tensor_ref* ref) {
  ref->flags = 0;
  ref->ptr = NULL;
  if (t == Py_None) {
    ref->kind = TILEOPS_REF_NONE;
    return 1;
  }
  if ((PyObject*)Py_TYPE(t) != tensor_type && (PyObject*)Py_TYPE(t) != parameter_type) return 0;
  if (e->count == MAX_TENSORS) return 0;
  if (grad_on) {
    PyObject* flag = PyObject_GetAttr(t, requires_grad_name);
    if (flag == NULL) return -1;
    const int requires = PyObject_IsTrue(flag);
    Py_DECREF(flag);
    if (requires != 0) return requires < 0 ? -1 : 0; /* the ctypes path names the input */
  }
  PyObject* capsule = PyObject_CallFunctionObjArgs(to_dlpack, t, NULL);
  if (capsule == NULL) {
    PyErr_Clear(); /* bool on torch 1.x, sparse, ...: the ctypes path converts or explains */
    return 0;
  }
  void* managed = PyCapsule_GetPointer(capsule, "dltensor");
  if (managed == NULL) {
    Py_DECREF(capsule);
    PyErr_Clear();
    return 0;
  }
  e->capsules[e->count++] = capsule;
  ref->kind = TILEOPS_REF_DLPACK;
  ref->ptr = managed;
  return 1;
}

/* Exports the first `n` items of sequence `items` into `refs`; answers as export_tensor. */
static int export_sequence(PyObject* items, Py_ssize_t n, int grad_on, Exports* e, tileops_tensor_ref* refs) {
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* t = PySequence_GetItem(items, i);
    if (t == NULL) return -1;
    const int taken = export_tensor(t, grad_on, e, &refs[i]);
    Py_DECREF(t);
    if (taken != 1) return taken;
  }
  return 1;
}

/* Marks every export as taken over by the C API: their capsules no longer free them. */
static void hand_over(Exports* e) {
  for (int i = 0; i < e->count; ++i) PyCapsule_SetName(e->capsules[i], "used_dltensor");
  drop_exports(e);
}

static void release_output(tileops_tensor_ref* ref) {
  DLManagedTensor* managed = (DLManagedTensor*)ref->ptr;
  if (managed != NULL && managed->deleter != NULL) managed->deleter(managed);
  ref->ptr = NULL;
}

/* Output `o` as the caller sees it: an argument the call returned, or a new torch tensor. */
static PyObject* output(tileops_call* call, int o, PyObject* tensors, PyObject* out, PyObject* buffers) {
  const int32_t source = call->output_sources[o];
  if (source >= 0) return PySequence_GetItem(tensors, source);
  if (source == TILEOPS_OUTPUT_OUT) return new_ref(out);
  if (source == TILEOPS_OUTPUT_BUFFER) return PySequence_GetItem(buffers, o);
  tileops_tensor_ref* ref = &call->outputs[o];
  if (ref->ptr == NULL) Py_RETURN_NONE;
  DLManagedTensor* exported = (DLManagedTensor*)ref->ptr;
  const int as_bool = bool_view != Py_None && exported->dl_tensor.dtype.code == kDLBoolCode;
  if (as_bool) exported->dl_tensor.dtype.code = kDLUInt;
  PyObject* capsule = PyCapsule_New(ref->ptr, "dltensor", NULL);
  if (capsule == NULL) {
    release_output(ref);
    return NULL;
  }
  ref->ptr = NULL;
  PyObject* tensor = PyObject_CallFunctionObjArgs(from_dlpack, capsule, NULL);
  if (tensor == NULL && PyCapsule_IsValid(capsule, "dltensor")) {
    DLManagedTensor* managed = (DLManagedTensor*)PyCapsule_GetPointer(capsule, "dltensor");
    if (managed->deleter != NULL) managed->deleter(managed);
  }
  Py_DECREF(capsule);
  if (tensor == NULL || !as_bool) return tensor;
  PyObject* view = PyObject_CallFunctionObjArgs(bool_view, tensor, NULL);
  Py_DECREF(tensor);
  return view;
}

/* call(op, tensors, out, buffers, n_outputs, check_grad) -> NotImplemented, or (status, result).
   `op` is a tileops_op* as an int; `tensors` a sequence of one tensor or None per input;
   `buffers` None or one per output. status 0: `result` is the op's result (one output, or a
   tuple); else the tileops_status* to raise, and result is None. */
static PyObject* call(PyObject* self, PyObject* args) {
  unsigned long long op;
  PyObject *tensors, *out, *buffers;
  int n_outputs, check_grad;
  (void)self;
  if (!PyArg_ParseTuple(args, "KOOOip", &op, &tensors, &out, &buffers, &n_outputs, &check_grad)) return NULL;
  if (op_call == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "tileops._fastcall: setup() was not called");
    return NULL;
  }
  const Py_ssize_t n_inputs = PySequence_Size(tensors);
  if (n_inputs < 0) return NULL;
  const Py_ssize_t n_buffers = buffers == Py_None ? 0 : n_outputs;
  if (n_inputs + 1 + n_buffers > MAX_TENSORS || n_outputs < 0 || n_outputs > MAX_TENSORS) Py_RETURN_NOTIMPLEMENTED;
  int grad_on = 0;
  if (check_grad) {
    PyObject* enabled = PyObject_CallObject(is_grad_enabled, NULL);
    if (enabled == NULL) return NULL;
    grad_on = PyObject_IsTrue(enabled);
    Py_DECREF(enabled);
  }
  tileops_tensor_ref inputs[MAX_TENSORS], outputs[MAX_TENSORS], buffer_refs[MAX_TENSORS];
  int32_t sources[MAX_TENSORS];
  tileops_call c;
  memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  c.num_inputs = (size_t)n_inputs;
  c.inputs = inputs;
  c.num_outputs = (size_t)n_outputs;
  c.outputs = outputs;
  c.output_sources = sources;
  Exports e = {{0}, 0};
  int taken = export_sequence(tensors, n_inputs, grad_on, &e, inputs);
  if (taken == 1) taken = export_tensor(out, grad_on, &e, &c.out);
  if (taken == 1) taken = export_sequence(buffers, n_buffers, grad_on, &e, buffer_refs);
  if (taken != 1 || e.count == 0) {
    drop_exports(&e);
    if (taken < 0) return NULL;
    Py_RETURN_NOTIMPLEMENTED;
  }
  if (n_buffers > 0) c.output_buffers = buffer_refs;
  for (int o = 0; o < n_outputs; ++o) {
    outputs[o].kind = TILEOPS_REF_DLPACK;
    outputs[o].flags = TILEOPS_DLPACK_LEGACY_BOOL;
    outputs[o].ptr = NULL;
  }
  /* The call's stream: torch's current one on the first tensor's device. */
  const DLManagedTensor* first = (const DLManagedTensor*)PyCapsule_GetPointer(e.capsules[0], "dltensor");
  const DLDevice device = first->dl_tensor.device;
  if ((device.device_type == kDLCUDA || device.device_type == kDLROCM) && current_stream != Py_None) {
    PyObject* stream = PyObject_CallFunction(current_stream, "i", (int)device.device_id);
    if (stream == NULL) {
      drop_exports(&e);
      return NULL;
    }
    c.use_stream = 1;
    c.stream_device = device;
    c.stream = PyLong_AsVoidPtr(stream);
    Py_DECREF(stream);
  }
  hand_over(&e);
  tileops_status* status;
  Py_BEGIN_ALLOW_THREADS
  status = op_call((tileops_op*)(uintptr_t)op, &c);
  Py_END_ALLOW_THREADS
  if (status != NULL) return Py_BuildValue("(KO)", (unsigned long long)(uintptr_t)status, Py_None);
  PyObject* result = n_outputs == 1 ? NULL : PyTuple_New(n_outputs);
  if (n_outputs != 1 && result == NULL) {
    for (int o = 0; o < n_outputs; ++o) release_output(&outputs[o]);
    return NULL;
  }
  for (int o = 0; o < n_outputs; ++o) {
    PyObject* item = output(&c, o, tensors, out, buffers);
    if (item == NULL) {
      for (int rest = o + 1; rest < n_outputs; ++rest) {
        if (sources[rest] == TILEOPS_OUTPUT_NEW) release_output(&outputs[rest]);
      }
      Py_XDECREF(result);
      return NULL;
    }
    if (n_outputs == 1) {
      result = item;
    } else {
      PyTuple_SetItem(result, o, item);
    }
  }
  if (result == NULL) result = new_ref(Py_None);
  return Py_BuildValue("(KN)", 0ULL, result);
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS,
     "setup(op_call_address, Tensor, Parameter, to_dlpack, from_dlpack, is_grad_enabled, current_raw_stream, "
     "bool_view)"},
    {"call", call, METH_VARARGS, "call(op, tensors, out, buffers, n_outputs, check_grad) -> (status, result)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastcall", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__fastcall(void) {
  requires_grad_name = PyUnicode_InternFromString("requires_grad");
  if (requires_grad_name == NULL) return NULL;
  return PyModule_Create(&module);
}
