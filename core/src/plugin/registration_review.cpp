#include "plugin/registration_review.hpp"

#include <algorithm>

#include "backend/registry.hpp"
#include "nearest_names.hpp"
#include "op/installed_kernels.hpp"
#include "tileops/errors.hpp"

namespace tileops::plugin {
namespace {

std::string join(const std::vector<std::string>& items, const char* separator = ", ") {
  std::string s;
  for (const auto& item : items) s += (s.empty() ? "" : separator) + item;
  return s;
}

template <class T>
bool overlap(const std::vector<T>& a, const std::vector<T>& b) {
  return std::any_of(a.begin(), a.end(), [&](const T& x) { return std::find(b.begin(), b.end(), x) != b.end(); });
}

// True when both kernel types may run on one device: a device type in common, and an
// architecture in common (an empty list means every architecture).
bool may_serve_same_devices(const KernelType& a, const KernelType& b) {
  if (!overlap(a.devices, b.devices)) return false;
  return a.supported_archs.empty() || b.supported_archs.empty() || overlap(a.supported_archs, b.supported_archs);
}

// One kernel type of an op, in-tree or registered.
struct Candidate {
  std::string key;
  std::string origin;  // "in-tree", "plugin 'x'", "the application"
  const KernelType* type;
  int interface;  // index into the class's interfaces, or -1
};

int interface_of(const OpClass& cls, const KernelType& type) {
  const auto& interfaces = cls.interfaces();
  for (std::size_t i = 0; i < interfaces.size(); ++i) {
    if (interfaces[i].type == type.interface) return static_cast<int>(i);
  }
  return -1;
}

std::string interfaces_str(const OpClass& cls) {
  std::vector<std::string> names;
  for (const auto& i : cls.interfaces()) names.push_back("'" + i.name + "' (" + i.type_name + ")");
  return names.empty() ? "none (it is served by its sub-ops)" : join(names);
}

// The problems of `mine`, a kernel type the plugin registered for `cls`.
void review_kernel_type(const OpClass& cls, const Candidate& mine, const std::vector<Candidate>& all,
                        std::vector<std::string>& problems) {
  const std::string& op = cls.name();
  const std::string subject = "kernel type '" + mine.key + "' of " + op;
  for (const auto& [key, type] : cls.kernel_types()) {
    if (key == mine.key) {
      problems.push_back(subject + " reuses the in-tree key '" + key + "'; choose another key");
      return;
    }
  }
  if (mine.interface < 0) {
    problems.push_back(subject + " (" + mine.type->class_name + ") implements " + mine.type->interface_name + ", which " +
                       op + " does not call; its kernel interfaces are " + interfaces_str(cls));
    return;
  }
  const std::string& interface = cls.interfaces()[mine.interface].name;
  if (mine.type->general) {
    for (const Candidate& other : all) {
      if (&other != &mine && other.interface == mine.interface && other.type->general) {
        problems.push_back(subject + " is general, but interface '" + interface + "' already has the general " +
                           "implementation '" + other.key + "' (" + other.origin + "); an interface has at most one, "
                           "the portable reference: declare general = false");
      }
    }
    if (!mine.type->preferred_over.empty()) {
      problems.push_back(subject + " is general and declares preferred_over; a general implementation ranks below all "
                         "others and is preferred over none");
    }
  }
  for (const std::string& other_key : mine.type->preferred_over) {
    const auto other = std::find_if(all.begin(), all.end(), [&](const Candidate& c) { return c.key == other_key; });
    if (other_key == mine.key) {
      problems.push_back(subject + " is preferred over itself");
    } else if (other == all.end()) {
      std::vector<std::string> same;
      for (const Candidate& c : all) {
        if (c.interface == mine.interface && &c != &mine) same.push_back("'" + c.key + "' (" + c.origin + ")");
      }
      problems.push_back(subject + " is preferred over '" + other_key + "', which no kernel type of " + op +
                         " has (plugins that load later cannot be named); the other keys of interface '" + interface +
                         "' are " + (same.empty() ? std::string("none") : join(same)));
    } else if (other->interface != mine.interface) {
      const std::string theirs = other->interface < 0 ? other->type->interface_name
                                                      : "interface '" + cls.interfaces()[other->interface].name + "'";
      problems.push_back(subject + " is preferred over '" + other_key + "' (" + other->origin + "), which implements " +
                         theirs + ", not interface '" + interface + "'");
    }
  }
}

// Warns about each pair (a kernel type of this plugin, another specific one) that may serve
// the same call with neither preferred over the other.
void warn_ambiguities(const OpClass& cls, const InstalledKernels& table, const std::string& owner,
                      const std::vector<std::string>& my_keys, std::vector<std::string>& warnings) {
  const auto mine = [&](const InstalledKernel& k) {
    return !k.in_tree && k.owner == owner && std::find(my_keys.begin(), my_keys.end(), k.key) != my_keys.end();
  };
  const auto outranks = [&](std::size_t a, std::size_t b) {
    const auto& list = table.kernels[a].outranks;
    return std::find(list.begin(), list.end(), static_cast<int>(b)) != list.end();
  };
  for (std::size_t a = 0; a < table.kernels.size(); ++a) {
    const InstalledKernel& ka = table.kernels[a];
    if (!mine(ka) || ka.type->general) continue;
    for (std::size_t b = 0; b < table.kernels.size(); ++b) {
      const InstalledKernel& kb = table.kernels[b];
      if (b == a || kb.interface != ka.interface || kb.type->general || (mine(kb) && b < a)) continue;
      if (!may_serve_same_devices(*ka.type, *kb.type) || outranks(a, b) || outranks(b, a)) continue;
      std::vector<std::string> devices;
      for (const auto& d : ka.type->devices) {
        if (std::find(kb.type->devices.begin(), kb.type->devices.end(), d) != kb.type->devices.end()) devices.push_back(d);
      }
      warnings.push_back("kernel type '" + ka.key + "' (" + ka.origin() + ") and '" + kb.key + "' (" + kb.origin() +
                         ") both implement interface '" + cls.interfaces()[ka.interface].name + "' of " + cls.name() +
                         " on " + join(devices) + ", and neither is preferred over the other: every call of " +
                         cls.name() + " on " + join(devices) + " that both accept (their refusals let through) "
                         "fails with 'dispatch is ambiguous'. Fix: declare preferred_over {\"" + kb.key + "\"} in '" +
                         ka.key + "' (or {\"" + ka.key + "\"} in '" + kb.key + "'); an application may choose with "
                         "prefer_kernels = " + cls.name() + "=<key>, or leave one out with disable_kernels or its plugin "
                         "with disable_plugins");
    }
  }
}

void review_op(const OpClass& cls, const Registrar& registrar, const std::vector<std::string>& my_keys,
               RegistrationReview& out) {
  std::vector<Candidate> all;
  for (const auto& [key, type] : cls.kernel_types()) all.push_back({key, "in-tree", type.get(), interface_of(cls, *type)});
  const std::vector<RegisteredKernelType> registered = registered_kernel_types(cls.name());
  for (const RegisteredKernelType& r : registered) {
    all.push_back({r.key, owner_phrase(r.owner), r.type.get(), interface_of(cls, *r.type)});
  }
  const std::size_t before = out.problems.size();
  for (std::size_t i = cls.kernel_types().size(); i < all.size(); ++i) {
    const RegisteredKernelType& r = registered[i - cls.kernel_types().size()];
    if (r.owner == registrar.owner() && std::find(my_keys.begin(), my_keys.end(), r.key) != my_keys.end()) {
      review_kernel_type(cls, all[i], all, out.problems);
    }
  }
  if (out.problems.size() != before) return;
  try {
    const InstalledKernels table = InstalledKernels::install(cls, true);
    warn_ambiguities(cls, table, registrar.owner(), my_keys, out.warnings);
  } catch (const Error& e) {
    out.problems.push_back(e.what());
  }
}

}  // namespace

RegistrationReview review_registrations(const Registrar& registrar, const OpCatalogue& catalogue) {
  RegistrationReview out;
  std::vector<std::string> ops;  // ops this plugin registered kernel types for, in order
  for (const Registration& r : registrar.registrations()) {
    if (r.kind != Registration::Kind::kernel_type && r.kind != Registration::Kind::kernel_builder) continue;
    if (!catalogue.knows(r.op)) {
      const std::string what = r.kind == Registration::Kind::kernel_type ? "kernel type '" + r.name + "'"
                                                                         : "the kernel builder of target '" + r.name + "'";
      out.problems.push_back(what + " is registered for op '" + r.op + "', which this host does not know" +
                             did_you_mean(r.op, catalogue.names()) +
                             "; the known ops are the in-tree ones and those of the manifests (see 'tileops ops')");
      continue;
    }
    if (r.kind == Registration::Kind::kernel_type && std::find(ops.begin(), ops.end(), r.op) == ops.end()) {
      ops.push_back(r.op);
    }
  }
  for (const std::string& op : ops) {
    const std::shared_ptr<const OpClass> cls = catalogue.find_class(op);
    if (!cls) continue;
    std::vector<std::string> my_keys;
    for (const Registration& r : registrar.registrations()) {
      if (r.kind == Registration::Kind::kernel_type && r.op == op) my_keys.push_back(r.name);
    }
    review_op(*cls, registrar, my_keys, out);
  }
  return out;
}

}  // namespace tileops::plugin
