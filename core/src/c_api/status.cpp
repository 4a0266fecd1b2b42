// Statuses: the C form of the error family.
#include <new>

#include "c_api/handles.hpp"
#include "tileops/errors.hpp"

namespace tileops::c_api {
namespace {

struct KindInfo {
  const char* name;
  int parent;
};

constexpr KindInfo kKinds[TILEOPS_ERROR_KIND_COUNT] = {
    {"", TILEOPS_OK},
    {"Error", TILEOPS_OK},
    {"TypeError", TILEOPS_ERROR},
    {"ValueError", TILEOPS_ERROR},
    {"RuntimeError", TILEOPS_ERROR},
    {"OutOfMemoryError", TILEOPS_RUNTIME_ERROR},
    {"OpNotAvailableError", TILEOPS_RUNTIME_ERROR},
    {"AmbiguousTargetError", TILEOPS_RUNTIME_ERROR},
    {"UnknownTargetError", TILEOPS_VALUE_ERROR},
    {"BackendError", TILEOPS_RUNTIME_ERROR},
    {"ConfigError", TILEOPS_VALUE_ERROR},
    {"ManifestError", TILEOPS_VALUE_ERROR},
};

// What is left when there is no memory for a status: tileops_status_free never releases it.
tileops_status no_memory_status{TILEOPS_OUT_OF_MEMORY_ERROR,
                                std::string()};

// The kind of a tileops::Error, by its most derived class.
int kind_of(const Error& e) {
  const std::string_view name = error_kind(e);
  for (int k = TILEOPS_ERROR; k < TILEOPS_ERROR_KIND_COUNT; ++k) {
    if (name == kKinds[k].name) return k;
  }
  return TILEOPS_ERROR;
}

tileops_status* make_status(int kind, const char* message) noexcept {
  try {
    return new tileops_status{kind, message};
  } catch (...) {
    return &no_memory_status;
  }
}

}  // namespace

tileops_status* current_exception_status() noexcept {
  try {
    throw;
  } catch (const Error& e) {
    return make_status(kind_of(e), e.what());
  } catch (const std::bad_alloc&) {
    return make_status(TILEOPS_OUT_OF_MEMORY_ERROR, "the host has no memory for this request (std::bad_alloc)");
  } catch (const std::exception& e) {
    return make_status(TILEOPS_ERROR, e.what());
  } catch (...) {
    return make_status(TILEOPS_ERROR, "an exception that is not a std::exception");
  }
}

}  // namespace tileops::c_api

extern "C" {

int tileops_status_kind(const tileops_status* status) { return status == nullptr ? TILEOPS_OK : status->kind; }

const char* tileops_status_message(const tileops_status* status) {
  if (status == &tileops::c_api::no_memory_status) return "the host has no memory to report an error";
  return status == nullptr ? "" : status->message.c_str();
}

void tileops_status_free(tileops_status* status) {
  if (status != &tileops::c_api::no_memory_status) delete status;
}

const char* tileops_error_kind_name(int kind) {
  return kind >= 0 && kind < TILEOPS_ERROR_KIND_COUNT ? tileops::c_api::kKinds[kind].name : nullptr;
}

int tileops_error_kind_parent(int kind) {
  return kind >= 0 && kind < TILEOPS_ERROR_KIND_COUNT ? tileops::c_api::kKinds[kind].parent : TILEOPS_OK;
}

}  // extern "C"
