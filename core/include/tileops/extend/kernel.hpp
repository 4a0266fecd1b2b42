// The kernel layer: call specs, kernel interfaces, kernel implementations and their entries.
//
// An op calls a kernel at a *kernel interface* (a KernelInterface subclass naming its call
// spec type and a pure virtual forward). An *implementation* derives Kernel and exactly one
// interface, and declares as static members where it runs and which calls it serves:
//
//   class CpuRMSNorm final : public Kernel, public RMSNormFwdInterface {
//    public:
//     static constexpr DeviceTypes devices{"cpu"};             // default {"cuda"}
//     static constexpr ArchList supported_archs{};             // default: every arch
//     static constexpr bool general = false;                   // default false
//     static constexpr KeyList preferred_over{"other_key"};    // default: none
//     static std::optional<std::string> refusal(const LayerNormCall&);  // default: serves all
//     static Entry entry_for(const LayerNormCall&);            // default: {call, Impl(call)}
//     Tensor forward(...) override;
//   };
//
// make_kernel_type<Impl>() turns such a class into a type-erased KernelType record; what C++
// can check at compile time (derives Kernel and one interface, implements forward, entry_for
// and refusal are static with the right signature) is checked there.
#pragma once

#include <algorithm>
#include <array>
#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <typeindex>
#include <vector>

#include "tileops/device.hpp"
#include "tileops/dtype.hpp"
#include "tileops/export.hpp"
#include "tileops/extend/cache_key.hpp"
#include "tileops/extend/identity.hpp"

namespace tileops {

// The immutable facts of one call that selection and building read. A concrete call spec
// derives CallSpec and lists its own fields once:
//
//   struct LayerNormCall final : CallSpec {
//     std::int64_t n = 0; double eps = 1e-5; DType dtype = DType::float16;
//     auto fields() const { return std::tie(n, eps, dtype); }
//   };
//
// `device` is the call's device; when left empty, kernel_for fills in the process
// accelerator's current device (if there is one). The device facts (architecture,
// multiprocessors, shared memory) come from the device's runtime on a cache miss.
struct CallSpec {
  std::optional<Device> device;
};

// A call spec type: derives CallSpec, has fields() returning a tuple of references, and
// every field can key a dispatch cache.
template <class C>
concept CallSpecType = std::derived_from<C, CallSpec> && std::copy_constructible<C> && requires(const C& c) {
  { c.fields() };
} && CacheKey<std::remove_cvref_t<decltype(std::declval<const C&>().fields())>>;

// Field tuples hold references; compare and hash them through their decayed value types.
template <class... T>
  requires(CacheKey<T> && ...)
struct CacheKeyTraits<std::tuple<const T&...>> {
  static std::size_t hash(const std::tuple<const T&...>& v) {
    return CacheKeyTraits<std::tuple<T...>>::hash(std::tuple<T...>(v));
  }
  static std::string str(const std::tuple<const T&...>& v) {
    return CacheKeyTraits<std::tuple<T...>>::str(std::tuple<T...>(v));
  }
};

// Type-erased operations on one call spec type.
struct CallSpecOps {
  std::type_index type;
  std::string name;  // the C++ type name, demangled
  std::size_t (*hash_fields)(const CallSpec&);
  bool (*equal_fields)(const CallSpec&, const CallSpec&);
  std::shared_ptr<const CallSpec> (*clone)(const CallSpec&);
  std::string (*fields_str)(const CallSpec&);
};

TILEOPS_API std::string demangle(const std::type_info& type);

// The default build identity of a call: its device and every field, by value.
template <CallSpecType C>
auto call_identity(const C& call) {
  return std::tuple_cat(std::make_tuple(call.device),
                        std::apply([](const auto&... field) { return std::make_tuple(field...); }, call.fields()));
}

// The type-erased operations of call spec type C, one record per type and shared object.
// Declared unconstrained (op.hpp names it without this header); C must be a CallSpecType.
template <class C>
const CallSpecOps& call_spec_ops() {
  static_assert(CallSpecType<C>, "a call spec derives CallSpec and has fields() whose values can key a cache");
  static const CallSpecOps ops{
      typeid(C),
      demangle(typeid(C)),
      [](const CallSpec& c) { return cache_key_hash(static_cast<const C&>(c).fields()); },
      [](const CallSpec& a, const CallSpec& b) {
        return static_cast<const C&>(a).fields() == static_cast<const C&>(b).fields();
      },
      [](const CallSpec& c) -> std::shared_ptr<const CallSpec> { return std::make_shared<C>(static_cast<const C&>(c)); },
      [](const CallSpec& c) { return cache_key_str(static_cast<const C&>(c).fields()); },
  };
  return ops;
}

class Kernel;

// The base of kernel interfaces. A concrete interface declares, besides its pure virtual
// forward and the contract of every argument:
//   using Interface = ThisInterface;   // inherited by implementations: names their interface
//   using Request = SomeCall;          // the call spec type kernel_for takes
//   static constexpr std::string_view kName = "ThisInterface";
class TILEOPS_API KernelInterface {
 public:
  virtual ~KernelInterface();
};

// A list of up to eight names, usable as a constexpr static member.
template <std::size_t Capacity = 8>
class NameList {
 public:
  constexpr NameList() = default;
  template <class... S>
  constexpr NameList(const S&... names) : items_{std::string_view(names)...}, size_(sizeof...(S)) {
    static_assert(sizeof...(S) <= Capacity, "NameList holds at most 8 names");
  }
  constexpr std::size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const std::string_view* begin() const { return items_.data(); }
  constexpr const std::string_view* end() const { return items_.data() + size_; }
  constexpr bool contains(std::string_view name) const { return std::find(begin(), end(), name) != end(); }

 private:
  std::array<std::string_view, Capacity> items_{};
  std::size_t size_ = 0;
};

using DeviceTypes = NameList<>;
using KeyList = NameList<>;

// Architectures an implementation supports (e.g. {80, 90}); empty means every architecture.
class ArchList {
 public:
  constexpr ArchList() = default;
  template <class... A>
  constexpr ArchList(A... archs) : items_{static_cast<int>(archs)...}, size_(sizeof...(A)) {}
  constexpr bool empty() const { return size_ == 0; }
  constexpr const int* begin() const { return items_.data(); }
  constexpr const int* end() const { return items_.data() + size_; }

 private:
  std::array<int, 8> items_{};
  std::size_t size_ = 0;
};

// What entry_for returns: the build identity (every fact that changes what is built) and the
// factory that builds the kernel the first time that identity appears.
struct Entry {
  Identity identity;
  std::function<std::shared_ptr<Kernel>()> factory;
};

// The base of kernel implementations. Defaults of the dispatch declarations live here; an
// implementation hides the ones it changes with static members of the same name.
class TILEOPS_API Kernel {
 public:
  static constexpr DeviceTypes devices{"cuda"};
  static constexpr ArchList supported_archs{};
  static constexpr bool general = false;
  static constexpr KeyList preferred_over{};

  virtual ~Kernel();

  // Puts the kernel in tuned mode: a kernel with autotune configs tunes now if its program is
  // built, else at the launch that builds it. The default records the request only.
  virtual void request_tune();
  bool tune_requested() const { return tune_requested_; }
  // The configuration the kernel runs with (e.g. tile sizes), or nullopt when it has none.
  virtual std::optional<std::string> config() const;
  // Kernels held inside this one (an entry may hold several); enumerated by iter_kernels().
  virtual std::vector<Kernel*> sub_kernels();

 private:
  bool tune_requested_ = false;
};

// The refusal of a kernel that computes in float: None for float32, float16 and bfloat16, else
// the reason naming `dtype`.
inline std::optional<std::string> refuse_unless_float(DType dtype) {
  if (dtype == DType::float32 || dtype == DType::float16 || dtype == DType::bfloat16) return std::nullopt;
  return "serves float32, float16 and bfloat16, not " + std::string(dtype_name(dtype));
}

// `Declarations` (Kernel or a class derived from it) narrowed to calls whose call spec's
// `dtype` is float32, float16 or bfloat16.
template <class Declarations>
struct FloatOnly : Declarations {
  template <class Call>
  static std::optional<std::string> refusal(const Call& call) {
    return refuse_unless_float(call.dtype);
  }
};

// The declarations of an op's own reference kernels (the generated ref::<Op>::<interface>
// classes): general, on the cpu.
struct ReferenceKernel : Kernel {
  static constexpr DeviceTypes devices{"cpu"};
  static constexpr bool general = true;
};

// A type-erased implementation record: what dispatch reads. Built by make_kernel_type<Impl>.
struct KernelType {
  std::string class_name;                       // the implementation's C++ name, for messages
  std::type_index impl;                         // identifies the implementation class
  std::type_index interface;                    // the one interface it implements
  std::string interface_name;                   // Interface::kName
  const CallSpecOps* request;                   // the interface's call spec type
  std::vector<std::string> devices;
  std::vector<int> supported_archs;             // empty: every architecture
  bool general = false;
  std::vector<std::string> preferred_over;
  std::function<std::optional<std::string>(const CallSpec&)> refusal;
  std::function<Entry(const CallSpec&)> entry_for;
  // Converts a built kernel to a pointer to its interface subobject.
  void* (*as_interface)(Kernel&);
};

// An implementation class: derives Kernel and exactly one KernelInterface (whose `Interface`
// alias it inherits), and is not abstract (implements every pure virtual of the interface).
template <class Impl>
concept KernelImplementation = std::derived_from<Impl, Kernel> && requires {
  typename Impl::Interface;
  typename Impl::Interface::Request;
  { Impl::Interface::kName } -> std::convertible_to<std::string_view>;
} && std::derived_from<Impl, typename Impl::Interface> && std::derived_from<typename Impl::Interface, KernelInterface> &&
                               !std::is_abstract_v<Impl> && CallSpecType<typename Impl::Interface::Request>;

template <KernelImplementation Impl>
KernelType make_kernel_type() {
  using I = typename Impl::Interface;
  using Request = typename I::Request;
  KernelType t{
      demangle(typeid(Impl)),
      typeid(Impl),
      typeid(I),
      std::string(I::kName),
      &call_spec_ops<Request>(),
      {},
      {},
      Impl::general,
      {},
      {},
      {},
      [](Kernel& k) -> void* { return static_cast<I*>(&static_cast<Impl&>(k)); },
  };
  for (std::string_view d : Impl::devices) t.devices.emplace_back(d);
  for (int a : Impl::supported_archs) t.supported_archs.push_back(a);
  for (std::string_view k : Impl::preferred_over) t.preferred_over.emplace_back(k);
  if constexpr (requires(const Request& c) {
                  { Impl::refusal(c) } -> std::convertible_to<std::optional<std::string>>;
                }) {
    t.refusal = [](const CallSpec& c) -> std::optional<std::string> {
      return Impl::refusal(static_cast<const Request&>(c));
    };
  } else {
    t.refusal = [](const CallSpec&) -> std::optional<std::string> { return std::nullopt; };
  }
  if constexpr (requires(const Request& c) {
                  { Impl::entry_for(c) } -> std::same_as<Entry>;
                }) {
    t.entry_for = [](const CallSpec& c) { return Impl::entry_for(static_cast<const Request&>(c)); };
  } else {
    static_assert(std::is_constructible_v<Impl, const Request&>,
                  "an implementation without entry_for must be constructible from its interface's call spec");
    t.entry_for = [](const CallSpec& c) {
      const Request& call = static_cast<const Request&>(c);
      return Entry{Identity::of(call_identity(call)), [call] { return std::shared_ptr<Kernel>(std::make_shared<Impl>(call)); }};
    };
  }
  return t;
}

}  // namespace tileops
