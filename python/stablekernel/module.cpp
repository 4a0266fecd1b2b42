// tileops._stablekernel: the Python side of the stable-ABI kernels (kernel.hpp). Built against
// CPython's limited API (3.9), like tileops._fastcall; links neither torch nor libtileops:
// setup() hands it the paths of the loaded libtorch and the addresses of the C API functions.
#define Py_LIMITED_API 0x03090000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>
#include <string>

#include "kernel.hpp"
#include "registry.hpp"
#include "shim.hpp"

namespace {

using namespace tileops_stable;

PyObject* plan_callback = nullptr;  // plan(branch, key, facts) -> [(shape, dtype), ...]

// "Kind: message" of the pending Python exception, which this clears.
std::string take_python_error() {
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  std::string text = "RuntimeError: unknown error";
  if (type != nullptr) {
    PyObject* name = PyObject_GetAttrString(type, "__name__");
    PyObject* message = value != nullptr ? PyObject_Str(value) : nullptr;
    PyObject* n = name != nullptr ? PyUnicode_AsUTF8String(name) : nullptr;
    PyObject* m = message != nullptr ? PyUnicode_AsUTF8String(message) : nullptr;
    text = std::string(n != nullptr ? PyBytes_AsString(n) : "Error") + ": " + (m != nullptr ? PyBytes_AsString(m) : "");
    Py_XDECREF(n);
    Py_XDECREF(m);
    Py_XDECREF(name);
    Py_XDECREF(message);
    PyErr_Clear();
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
  return text;
}

PyObject* int_tuple(const int64_t* values, int64_t n) {
  PyObject* t = PyTuple_New(n);
  if (t == nullptr) return nullptr;
  for (int64_t i = 0; i < n; ++i) {
    PyObject* v = PyLong_FromLongLong(values[i]);
    if (v == nullptr) {
      Py_DECREF(t);
      return nullptr;
    }
    PyTuple_SetItem(t, i, v);
  }
  return t;
}

// The facts list the callback takes: per tensor None or (shape, dtype name, strides).
PyObject* facts_list(const std::vector<TensorFacts>& facts) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(facts.size()));
  if (list == nullptr) return nullptr;
  for (size_t i = 0; i < facts.size(); ++i) {
    const TensorFacts& f = facts[i];
    PyObject* item = nullptr;
    if (!f.present) {
      Py_INCREF(Py_None);
      item = Py_None;
    } else {
      PyObject* shape = int_tuple(f.sizes, f.ndim);
      PyObject* strides = int_tuple(f.strides, f.ndim);
      if (shape != nullptr && strides != nullptr) item = Py_BuildValue("(OsO)", shape, f.dtype, strides);
      Py_XDECREF(shape);
      Py_XDECREF(strides);
    }
    if (item == nullptr) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SetItem(list, static_cast<Py_ssize_t>(i), item);
  }
  return list;
}

// Reads the callback's answer into `plan`; false with a Python error set when malformed.
bool read_plan(PyObject* answer, Plan* plan) {
  PyObject* items = PySequence_List(answer);
  if (items == nullptr) return false;
  const Py_ssize_t n = PyList_Size(items);
  plan->outputs.assign(static_cast<size_t>(n), PlannedOutput{});
  bool ok = true;
  for (Py_ssize_t o = 0; ok && o < n; ++o) {
    PyObject* entry = PyList_GetItem(items, o);  // borrowed
    PyObject* shape = nullptr;
    const char* dtype = nullptr;
    if (!PyArg_ParseTuple(entry, "Os", &shape, &dtype)) {
      ok = false;
      break;
    }
    PlannedOutput& p = plan->outputs[static_cast<size_t>(o)];
    p.dtype = torch_dtype(dtype);
    if (p.dtype < 0) {
      PyErr_Format(PyExc_TypeError, "tileops.torch: an output of dtype %s, which torch's shim does not name", dtype);
      ok = false;
      break;
    }
    PyObject* extents = PySequence_List(shape);
    if (extents == nullptr) {
      ok = false;
      break;
    }
    const Py_ssize_t ndim = PyList_Size(extents);
    p.sizes.resize(static_cast<size_t>(ndim));
    p.strides.resize(static_cast<size_t>(ndim));
    for (Py_ssize_t d = 0; d < ndim; ++d) p.sizes[d] = PyLong_AsLongLong(PyList_GetItem(extents, d));
    Py_DECREF(extents);
    if (PyErr_Occurred()) {
      ok = false;
      break;
    }
    int64_t stride = 1;
    for (Py_ssize_t d = ndim - 1; d >= 0; --d) {
      p.strides[d] = stride;
      stride *= p.sizes[d] > 1 ? p.sizes[d] : 1;
    }
  }
  Py_DECREF(items);
  return ok;
}

// The PlanSource of kernel.hpp: asks tileops.torch (with the GIL) for the plan.
std::string python_plan(int branch, std::string_view key, const std::vector<TensorFacts>& facts, Plan* plan) {
  PyGILState_STATE gil = PyGILState_Ensure();
  std::string error;
  PyObject* facts_obj = facts_list(facts);
  PyObject* answer = nullptr;
  if (facts_obj != nullptr) {
    answer = PyObject_CallFunction(plan_callback, "is#O", branch, key.data(), static_cast<Py_ssize_t>(key.size()),
                                   facts_obj);
    Py_DECREF(facts_obj);
  }
  if (answer == nullptr || !read_plan(answer, plan)) error = take_python_error();
  Py_XDECREF(answer);
  PyGILState_Release(gil);
  return error;
}

template <typename Fn>
Fn as_function(unsigned long long address) {
  return reinterpret_cast<Fn>(static_cast<uintptr_t>(address));
}

// setup(libtorch_cpu path, libtorch_cuda path or "", op_call, status_kind, status_message,
// status_free, error_kind_name, tensor_free, cuda DLPack code, plan callback) -> "" when every
// shim symbol resolved and the kernels may be registered, else why not.
PyObject* setup(PyObject*, PyObject* args) {
  const char *cpu = nullptr, *cuda = nullptr;
  unsigned long long call, kind, message, free_status, kind_name, free_tensor;
  int cuda_code = 2;
  PyObject* callback = nullptr;
  if (!PyArg_ParseTuple(args, "ssKKKKKKiO", &cpu, &cuda, &call, &kind, &message, &free_status, &kind_name,
                        &free_tensor, &cuda_code, &callback)) {
    return nullptr;
  }
  const std::string missing = resolve(cpu, cuda);
  if (!missing.empty()) return PyUnicode_FromString(missing.c_str());
  Py_INCREF(callback);
  Py_XDECREF(plan_callback);
  plan_callback = callback;
  TileopsApi api{};
  api.op_call = as_function<decltype(api.op_call)>(call);
  api.status_kind = as_function<decltype(api.status_kind)>(kind);
  api.status_message = as_function<decltype(api.status_message)>(message);
  api.status_free = as_function<decltype(api.status_free)>(free_status);
  api.error_kind_name = as_function<decltype(api.error_kind_name)>(kind_name);
  api.tensor_free = as_function<decltype(api.tensor_free)>(free_tensor);
  configure(api, python_plan, cuda_code);
  return PyUnicode_FromString("");
}

// register(name, optional flags, has_out, n_outputs, returned indices, dispatch key)
// -> (branch index, "") or (-1, why not).
PyObject* register_kernel(PyObject*, PyObject* args) {
  const char *name = nullptr, *key = nullptr;
  PyObject *optional = nullptr, *returned = nullptr;
  int has_out = 0, n_outputs = 0;
  if (!PyArg_ParseTuple(args, "sOpiOs", &name, &optional, &has_out, &n_outputs, &returned, &key)) return nullptr;
  BranchSpec spec;
  spec.name = name;
  spec.has_out = has_out != 0;
  spec.n_outputs = n_outputs;
  PyObject* flags = PySequence_List(optional);
  PyObject* indices = flags != nullptr ? PySequence_List(returned) : nullptr;
  if (indices == nullptr) {
    Py_XDECREF(flags);
    return nullptr;
  }
  for (Py_ssize_t i = 0; i < PyList_Size(flags); ++i) spec.optional.push_back(PyObject_IsTrue(PyList_GetItem(flags, i)) == 1);
  for (Py_ssize_t i = 0; i < PyList_Size(indices); ++i) spec.returned.push_back(static_cast<int>(PyLong_AsLong(PyList_GetItem(indices, i))));
  Py_DECREF(flags);
  Py_DECREF(indices);
  if (PyErr_Occurred()) return nullptr;
  std::string error;
  const int index = register_branch(spec, key, &error);
  return Py_BuildValue("(is)", index, error.c_str());
}

// add_op(instance key, tileops_op* as an int): the kernels may call it from now on.
PyObject* add_op_py(PyObject*, PyObject* args) {
  const char* key = nullptr;
  unsigned long long op = 0;
  if (!PyArg_ParseTuple(args, "sK", &key, &op)) return nullptr;
  add_op(key, reinterpret_cast<tileops_op*>(static_cast<uintptr_t>(op)));
  Py_RETURN_NONE;
}

// remove_op(instance key): returns once no kernel uses the op; the caller may free it then.
PyObject* remove_op_py(PyObject*, PyObject* args) {
  const char* key = nullptr;
  if (!PyArg_ParseTuple(args, "s", &key)) return nullptr;
  std::string k(key);
  Py_BEGIN_ALLOW_THREADS
  remove_op(k);
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
}

PyObject* clear_plans_py(PyObject*, PyObject*) {
  clear_plans();
  Py_RETURN_NONE;
}

// unregister_all(): every kernel registered so far is unregistered from torch.
PyObject* unregister_all_py(PyObject*, PyObject*) {
  unregister_all();
  clear_plans();
  Py_RETURN_NONE;
}

PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS,
     "setup(libtorch_cpu, libtorch_cuda, op_call, status_kind, status_message, status_free, error_kind_name, "
     "tensor_free, cuda_dlpack_code, plan) -> '' or why the kernels cannot be used"},
    {"register", register_kernel, METH_VARARGS,
     "register(name, optional, has_out, n_outputs, returned, dispatch_key) -> (index, error)"},
    {"add_op", add_op_py, METH_VARARGS, "add_op(instance_key, op_address)"},
    {"remove_op", remove_op_py, METH_VARARGS, "remove_op(instance_key)"},
    {"clear_plans", clear_plans_py, METH_NOARGS, "clear_plans()"},
    {"unregister_all", unregister_all_py, METH_NOARGS, "unregister_all()"},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "_stablekernel", nullptr, -1, methods, nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__stablekernel(void) { return PyModule_Create(&module); }
