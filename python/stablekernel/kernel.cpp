// The stable-ABI kernels (kernel.hpp): trampolines, argument ownership, plans, the tileops call.
#include "kernel.hpp"

#include <array>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "shim.hpp"

namespace tileops_stable {

namespace {

constexpr int kMaxTensors = 32;  // inputs + out, and outputs, per call

TileopsApi api;
PlanSource plan_source = nullptr;
int32_t cuda_dlpack_code = 2;  // kDLCUDA

BranchSpec branches[kMaxBranches];
std::atomic<int> branch_count{0};
std::mutex register_mutex;
std::map<std::string, LibraryHandle> libraries;  // by dispatch key; kept for the process's life

// Throws the error of shim call `what` when `code` is not 0.
void check_shim(TorchError code, const char* what) {
  if (code != 0) throw std::runtime_error(std::string("RuntimeError: torch's stable shim failed in ") + what);
}

// Every torch handle a call received or made and has not handed back: deleted on scope exit,
// so that an error anywhere leaks none.
struct Owned {
  TensorHandle tensors[2 * kMaxTensors];
  int count = 0;
  StringHandle key = nullptr;

  void add(TensorHandle t) {
    if (t != nullptr) tensors[count++] = t;
  }
  // Forgets the last `n` tensors added: their ownership moved elsewhere (the return stack).
  void release_last(int n) { count -= n; }
  ~Owned() {
    for (int i = 0; i < count; ++i) shim.delete_tensor(tensors[i]);
    if (key != nullptr) shim.delete_string(key);
  }
};

// One thread's reusable buffers, so that a call with a cached plan allocates nothing.
struct Scratch {
  std::vector<int64_t> facts_key;
  std::vector<int64_t> unused_key;  // the facts of outputs, which no key needs
  Plan plan;
  std::vector<TensorFacts> facts;
  DLTensor slots[kMaxTensors];
  DLTensor buffers[kMaxTensors];
  tileops_tensor_ref input_refs[kMaxTensors];
  tileops_tensor_ref output_refs[kMaxTensors];
  tileops_tensor_ref buffer_refs[kMaxTensors];
  int32_t sources[kMaxTensors];
  TensorHandle made[kMaxTensors];
};
thread_local Scratch scratch;

// The handle in a `Tensor?` argument: NULL for None, else the tensor of the heap StableIValue
// torch boxed it in, whose box this frees (torch_delete_stable_ivalue from torch 2.13; before,
// the extension frees it with delete, as torch's own header does).
TensorHandle take_optional(StableIValue value) {
  if (value == 0) return nullptr;
  auto* box = reinterpret_cast<StableIValue*>(static_cast<uintptr_t>(value));
  auto handle = reinterpret_cast<TensorHandle>(static_cast<uintptr_t>(*box));
  if (shim.delete_stable_ivalue != nullptr) {
    shim.delete_stable_ivalue(box);
  } else {
    delete box;
  }
  return handle;
}

// Appends instance key `key` to `out`: its length, then its bytes 8 to an element.
void append_key(std::string_view key, std::vector<int64_t>* out) {
  out->push_back(static_cast<int64_t>(key.size()));
  for (size_t i = 0; i < key.size(); i += 8) {
    uint64_t word = 0;
    std::memcpy(&word, key.data() + i, std::min<size_t>(8, key.size() - i));
    out->push_back(static_cast<int64_t>(word));
  }
}

// Fills `t` from torch tensor `h` (a view of its memory, extents and strides, borrowed while
// `h` lives) and appends its facts to `key`. Throws for a dtype tileops does not take.
void describe(TensorHandle h, DLTensor* t, int32_t* torch_dtype, int32_t* device_type, std::vector<int64_t>* key) {
  int64_t ndim = 0;
  check_shim(shim.get_dim(h, &ndim), "aoti_torch_get_dim");
  check_shim(shim.get_sizes(h, &t->shape), "aoti_torch_get_sizes");
  check_shim(shim.get_strides(h, &t->strides), "aoti_torch_get_strides");
  check_shim(shim.get_data_ptr(h, &t->data), "aoti_torch_get_data_ptr");
  check_shim(shim.get_dtype(h, torch_dtype), "aoti_torch_get_dtype");
  int32_t index = 0;
  check_shim(shim.get_device_type(h, device_type), "aoti_torch_get_device_type");
  check_shim(shim.get_device_index(h, &index), "aoti_torch_get_device_index");
  uint8_t code = 0, bits = 0;
  if (!dlpack_dtype(*torch_dtype, &code, &bits)) {
    throw std::runtime_error("TypeError: a tensor of a dtype tileops does not take (torch dtype code " +
                             std::to_string(*torch_dtype) + ")");
  }
  t->ndim = static_cast<int32_t>(ndim);
  t->dtype = DLDataType{code, bits, 1};
  t->byte_offset = 0;
  // torch gives a CPU tensor device index -1 (c10::Device("cpu").index()); DLPack wants 0.
  const bool cuda = *device_type == shim.device_type_cuda();
  t->device.device_type = cuda ? static_cast<DLDeviceType>(cuda_dlpack_code) : kDLCPU;
  t->device.device_id = cuda ? index : 0;
  key->push_back(*torch_dtype);
  key->push_back(*device_type);
  key->push_back(index);
  key->push_back(ndim);
  key->insert(key->end(), t->shape, t->shape + ndim);
  key->insert(key->end(), t->strides, t->strides + ndim);
}

// Fills `plan` from the plan source after a cache miss, and caches it.
void plan_miss(int index, std::string_view key, const DLTensor* slots, const bool* present, const int32_t* dtypes,
               int n_slots, Scratch& s) {
  s.facts.assign(n_slots, TensorFacts{});
  for (int i = 0; i < n_slots; ++i) {
    if (!present[i]) continue;
    s.facts[i] = TensorFacts{true, dtype_name(dtypes[i]), slots[i].ndim, slots[i].shape, slots[i].strides};
  }
  std::string error = plan_source(index, key, s.facts, &s.plan);
  if (!error.empty()) throw std::runtime_error(error);
  if (s.plan.outputs.size() != branches[index].returned.size()) {
    throw std::runtime_error("RuntimeError: tileops.torch: a plan of the wrong number of outputs");
  }
  store_plan(s.facts_key, s.plan);
}

// The kernel of branch `index`: see kernel.hpp and docs. Owns every argument on the stack.
void run(int index, StableIValue* stack, uint64_t nargs, uint64_t nrets) {
  const BranchSpec& spec = branches[index];
  const int n_inputs = static_cast<int>(spec.optional.size());
  const int n_slots = n_inputs + (spec.has_out ? 1 : 0);
  Owned owned;
  Scratch& s = scratch;
  TensorHandle handles[kMaxTensors];
  // Take every argument over first, so that nothing below can leak one.
  for (int i = 0; i < n_inputs; ++i) {
    handles[i] = spec.optional[i] ? take_optional(stack[i]) : reinterpret_cast<TensorHandle>(static_cast<uintptr_t>(stack[i]));
    owned.add(handles[i]);
  }
  if (spec.has_out) {
    handles[n_inputs] = reinterpret_cast<TensorHandle>(static_cast<uintptr_t>(stack[n_inputs]));
    owned.add(handles[n_inputs]);
  }
  owned.key = reinterpret_cast<StringHandle>(static_cast<uintptr_t>(stack[n_slots]));
  if (nargs != static_cast<uint64_t>(n_slots + 1) || nrets != spec.returned.size()) {
    throw std::runtime_error("RuntimeError: tileops.torch: " + spec.name + " called with an unexpected schema");
  }
  const char* key_chars = nullptr;
  check_shim(shim.string_c_str(owned.key, &key_chars), "torch_string_c_str");
  const std::string_view key(key_chars);

  // Facts of every tensor argument, and the plan they call for.
  bool present[kMaxTensors];
  int32_t dtypes[kMaxTensors], device_types[kMaxTensors];
  int first = -1;
  s.facts_key.clear();
  append_key(key, &s.facts_key);
  s.facts_key.push_back(index);
  for (int i = 0; i < n_slots; ++i) {
    present[i] = handles[i] != nullptr;
    if (!present[i]) {
      s.facts_key.push_back(-1);
      s.input_refs[i] = tileops_tensor_ref{TILEOPS_REF_NONE, 0, nullptr};
      continue;
    }
    describe(handles[i], &s.slots[i], &dtypes[i], &device_types[i], &s.facts_key);
    if (first < 0) first = i;
  }
  if (first < 0) throw std::runtime_error("TypeError: tileops.torch: " + spec.name + " called without a tensor");
  if (!find_plan(s.facts_key, &s.plan)) plan_miss(index, key, s.slots, present, dtypes, n_slots, s);

  // New outputs from torch's allocator on the first tensor's device.
  const int n_returned = static_cast<int>(spec.returned.size());
  const int32_t device_type = device_types[first];
  int32_t device_index = 0;  // torch's own index (-1 on the CPU), for torch's allocator
  check_shim(shim.get_device_index(handles[first], &device_index), "aoti_torch_get_device_index");
  for (int r = 0; r < n_returned; ++r) {
    const PlannedOutput& p = s.plan.outputs[r];
    TensorHandle made = nullptr;
    check_shim(shim.empty_strided(static_cast<int64_t>(p.sizes.size()), p.sizes.data(), p.strides.data(), p.dtype,
                                  device_type, device_index, &made),
               "aoti_torch_empty_strided");
    if (made == nullptr) throw std::runtime_error("RuntimeError: aoti_torch_empty_strided gave no tensor");
    owned.add(made);
    s.made[r] = made;
  }

  tileops_call call;
  std::memset(&call, 0, sizeof call);
  call.struct_size = sizeof call;
  for (int i = 0; i < n_slots; ++i) {
    if (present[i]) s.input_refs[i] = tileops_tensor_ref{TILEOPS_REF_DLTENSOR, 0, &s.slots[i]};
  }
  call.num_inputs = static_cast<size_t>(n_inputs);
  call.inputs = s.input_refs;
  call.out = spec.has_out ? s.input_refs[n_inputs] : tileops_tensor_ref{TILEOPS_REF_NONE, 0, nullptr};
  call.num_outputs = static_cast<size_t>(spec.n_outputs);
  call.outputs = s.output_refs;
  call.output_sources = s.sources;
  for (int o = 0; o < spec.n_outputs; ++o) {
    s.output_refs[o] = tileops_tensor_ref{TILEOPS_REF_TENSOR, 0, nullptr};
    s.buffer_refs[o] = tileops_tensor_ref{TILEOPS_REF_NONE, 0, nullptr};
  }
  for (int r = 0; r < n_returned; ++r) {
    const int o = spec.returned[r];
    int32_t ignored_dtype = 0, ignored_type = 0;
    s.unused_key.clear();
    describe(s.made[r], &s.buffers[r], &ignored_dtype, &ignored_type, &s.unused_key);
    s.buffer_refs[o] = tileops_tensor_ref{TILEOPS_REF_DLTENSOR, 0, &s.buffers[r]};
  }
  call.output_buffers = n_returned > 0 ? s.buffer_refs : nullptr;
  if (device_type == shim.device_type_cuda()) {
    if (shim.current_cuda_stream == nullptr) {
      throw std::runtime_error("RuntimeError: tileops.torch: a CUDA tensor, but libtorch_cuda's shim was not found");
    }
    void* stream = nullptr;
    check_shim(shim.current_cuda_stream(device_index, &stream), "aoti_torch_get_current_cuda_stream");
    call.use_stream = 1;
    call.stream_device = s.slots[first].device;
    call.stream = stream;
  }

  tileops_status* status = nullptr;
  {
    OpReader reader;
    tileops_op* op = reader.find(key);
    if (op == nullptr) {
      throw std::runtime_error("RuntimeError: no live tileops op has instance key '" + std::string(key) +
                               "'; it was destroyed or never created");
    }
    status = api.op_call(op, &call);
  }
  // Any new output tileops made itself (none is expected: every returned one has a buffer).
  for (int o = 0; o < spec.n_outputs; ++o) {
    if (s.output_refs[o].ptr != nullptr) api.tensor_free(static_cast<tileops_tensor*>(s.output_refs[o].ptr));
  }
  if (status != nullptr) {
    const char* kind = api.error_kind_name(api.status_kind(status));
    std::string text = std::string(kind != nullptr ? kind : "Error") + ": " + api.status_message(status);
    api.status_free(status);
    throw std::runtime_error(text);
  }
  // Hand the outputs to torch: the made handles are the last n_returned owned ones.
  for (int r = 0; r < n_returned; ++r) stack[r] = static_cast<StableIValue>(reinterpret_cast<uintptr_t>(s.made[r]));
  owned.release_last(n_returned);
}

template <int I>
void trampoline(StableIValue* stack, uint64_t nargs, uint64_t nrets) {
  run(I, stack, nargs, nrets);
}

template <int... I>
constexpr std::array<BoxedFn, sizeof...(I)> make_trampolines(std::integer_sequence<int, I...>) {
  return {&trampoline<I>...};
}

constexpr std::array<BoxedFn, kMaxBranches> trampolines = make_trampolines(std::make_integer_sequence<int, kMaxBranches>{});

}  // namespace

void configure(const TileopsApi& tileops, PlanSource plans, int32_t cuda_code) {
  api = tileops;
  plan_source = plans;
  cuda_dlpack_code = cuda_code;
}

int register_branch(const BranchSpec& spec, const char* dispatch_key, std::string* error) {
  std::lock_guard<std::mutex> lock(register_mutex);
  if (static_cast<int>(spec.optional.size()) + 1 > kMaxTensors || spec.n_outputs > kMaxTensors) {
    *error = "too many tensors for the stable-ABI kernel";
    return -1;
  }
  const int index = branch_count.load();
  if (index >= kMaxBranches) {
    *error = "more boundary operators than stable-ABI kernel slots (" + std::to_string(kMaxBranches) + ")";
    return -1;
  }
  auto it = libraries.find(dispatch_key);
  if (it == libraries.end()) {
    LibraryHandle lib = nullptr;
    if (shim.library_init_impl("tileops", dispatch_key, __FILE__, __LINE__, &lib) != 0) {
      *error = std::string("aoti_torch_library_init_impl failed for ") + dispatch_key;
      return -1;
    }
    it = libraries.emplace(dispatch_key, lib).first;
  }
  branches[index] = spec;
  if (shim.library_impl(it->second, spec.name.c_str(), trampolines[index], kBuildVersion_2_10) != 0) {
    *error = "torch_library_impl failed for tileops::" + spec.name;
    return -1;
  }
  branch_count.store(index + 1);
  return index;
}

void unregister_all() {
  std::lock_guard<std::mutex> lock(register_mutex);
  for (auto& entry : libraries) shim.delete_library(entry.second);
  libraries.clear();
  branch_count.store(0);
}

}  // namespace tileops_stable
