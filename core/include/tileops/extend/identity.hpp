// Identity: a type-erased, hashable, comparable value that says what a build is. Kernel
// entries are cached per (implementation, identity), held sub-ops per (stage, identity).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <typeindex>
#include <typeinfo>

#include "tileops/export.hpp"
#include "tileops/extend/cache_key.hpp"

namespace tileops {

class TILEOPS_API Identity {
 public:
  // The empty identity ("None"): everything the build depends on was settled earlier.
  Identity() = default;

  // Wraps any value the dispatch cache can key on (see CacheKey in cache_key.hpp).
  template <CacheKey T>
  static Identity of(T value) {
    Identity id;
    id.value_ = std::make_shared<const Holder<T>>(std::move(value));
    return id;
  }

  bool is_none() const { return value_ == nullptr; }
  std::size_t hash() const { return value_ ? value_->hash() : 0; }
  std::string str() const { return value_ ? value_->str() : "None"; }

  friend bool operator==(const Identity& a, const Identity& b) {
    if (a.value_ == b.value_) return true;
    if (!a.value_ || !b.value_) return false;
    return a.value_->type() == b.value_->type() && a.value_->equals(*b.value_);
  }

 private:
  struct Base {
    virtual ~Base() = default;
    virtual std::type_index type() const = 0;
    virtual std::size_t hash() const = 0;
    virtual bool equals(const Base& other) const = 0;
    virtual std::string str() const = 0;
  };
  template <class T>
  struct Holder final : Base {
    explicit Holder(T v) : value(std::move(v)) {}
    std::type_index type() const override { return typeid(T); }
    std::size_t hash() const override { return cache_key_hash(value); }
    bool equals(const Base& other) const override { return value == static_cast<const Holder&>(other).value; }
    std::string str() const override { return cache_key_str(value); }
    T value;
  };

  std::shared_ptr<const Base> value_;
};

}  // namespace tileops

template <>
struct std::hash<tileops::Identity> {
  std::size_t operator()(const tileops::Identity& id) const noexcept { return id.hash(); }
};
