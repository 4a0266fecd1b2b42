#include "plugin/registration_review.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "backend/registry.hpp"
#include "join.hpp"
#include "nearest_names.hpp"
#include "op/installed_kernels.hpp"
#include "tileops/errors.hpp"

namespace tileops::plugin {
namespace {

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

// At most this many names are listed in one message; the rest are counted.
constexpr std::size_t kNamesListed = 8;

// The problems of `mine`, a kernel type the plugin registered for `cls`; `by_key` indexes `all`.
void review_kernel_type(const OpClass& cls, const Candidate& mine, const std::vector<Candidate>& all,
                        const std::unordered_map<std::string_view, std::size_t>& by_key,
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
    const auto found = by_key.find(other_key);
    const Candidate* other = found == by_key.end() ? nullptr : &all[found->second];
    if (other_key == mine.key) {
      problems.push_back(subject + " is preferred over itself");
    } else if (other == nullptr) {
      std::vector<std::string> same;
      for (const Candidate& c : all) {
        if (c.interface == mine.interface && &c != &mine) same.push_back("'" + c.key + "' (" + c.origin + ")");
      }
      problems.push_back(subject + " is preferred over '" + other_key + "', which no kernel type of " + op +
                         " has (plugins that load later cannot be named); the other keys of interface '" + interface +
                         "' are " + (same.empty() ? std::string("none") : join_first(same, kNamesListed)));
    } else if (other->interface != mine.interface) {
      const std::string theirs = other->interface < 0 ? other->type->interface_name
                                                      : "interface '" + cls.interfaces()[other->interface].name + "'";
      problems.push_back(subject + " is preferred over '" + other_key + "' (" + other->origin + "), which implements " +
                         theirs + ", not interface '" + interface + "'");
    }
  }
}

// The warning that kernel types `a` and `b` may serve the same calls of `cls`, neither
// preferred over the other.
std::string pair_warning(const OpClass& cls, const InstalledKernel& a, const InstalledKernel& b) {
  std::vector<std::string> devices;
  for (const auto& d : a.type->devices) {
    if (std::find(b.type->devices.begin(), b.type->devices.end(), d) != b.type->devices.end()) devices.push_back(d);
  }
  return "kernel type '" + a.key + "' (" + a.origin() + ") and '" + b.key + "' (" + b.origin() +
         ") both implement interface '" + cls.interfaces()[a.interface].name + "' of " + cls.name() + " on " +
         join(devices) + ", and neither is preferred over the other: every call of " + cls.name() + " on " +
         join(devices) + " that both accept (their refusals let through) fails with 'dispatch is ambiguous'. Fix: "
         "declare preferred_over {\"" + b.key + "\"} in '" + a.key + "' (or {\"" + a.key + "\"} in '" + b.key +
         "'); an application may choose with prefer_kernels = " + cls.name() + "=<key>, or leave one out with "
         "disable_kernels or its plugin with disable_plugins";
}

// At most this many ambiguity warnings per op and plugin; the rest are summed up in one more.
constexpr std::size_t kAmbiguityWarnings = 16;

// Warns about each kernel type of this plugin that may serve the same call as other specific
// ones with neither preferred over the other: the pair when it has one such partner, else one
// warning listing them. Near-linear in the kernel types: a plugin may register thousands.
void warn_ambiguities(const OpClass& cls, const InstalledKernels& table, const std::string& owner,
                      const std::vector<std::string>& my_keys, std::vector<std::string>& warnings) {
  const std::size_t n = table.kernels.size();
  const std::unordered_set<std::string_view> my_key_set(my_keys.begin(), my_keys.end());
  std::vector<char> mine(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    const InstalledKernel& kernel = table.kernels[k];
    mine[k] = !kernel.in_tree && kernel.owner == owner && my_key_set.contains(kernel.key);
  }
  std::vector<std::vector<int>> outranked_by(n);
  for (std::size_t k = 0; k < n; ++k) {
    for (int o : table.kernels[k].outranks) outranked_by[o].push_back(static_cast<int>(k));
  }
  std::vector<char> ordered(n, 0);  // for the kernel type `a` at hand: b outranks a or a outranks b
  std::size_t warned = 0, unwarned = 0;
  for (std::size_t a = 0; a < n; ++a) {
    const InstalledKernel& ka = table.kernels[a];
    if (!mine[a] || ka.type->general) continue;
    for (int o : ka.outranks) ordered[o] = 1;
    for (int o : outranked_by[a]) ordered[o] = 1;
    std::vector<std::size_t> partners;
    for (std::size_t b = 0; b < n; ++b) {
      const InstalledKernel& kb = table.kernels[b];
      if (b == a || kb.interface != ka.interface || kb.type->general || (mine[b] && b < a) || ordered[b]) continue;
      if (may_serve_same_devices(*ka.type, *kb.type)) partners.push_back(b);
    }
    for (int o : ka.outranks) ordered[o] = 0;
    for (int o : outranked_by[a]) ordered[o] = 0;
    if (partners.empty()) continue;
    if (warned == kAmbiguityWarnings) {
      ++unwarned;
      continue;
    }
    ++warned;
    if (partners.size() == 1) {
      warnings.push_back(pair_warning(cls, ka, table.kernels[partners[0]]));
      continue;
    }
    std::vector<std::string> names;
    for (std::size_t b : partners) names.push_back("'" + table.kernels[b].key + "' (" + table.kernels[b].origin() + ")");
    warnings.push_back("kernel type '" + ka.key + "' (" + ka.origin() + ") and " + std::to_string(partners.size()) +
                       " others (" + join_first(names, kNamesListed) + ") implement interface '" + cls.interfaces()[ka.interface].name +
                       "' of " + cls.name() + " on devices in common, and none of them is preferred over '" + ka.key +
                       "' or it over them: every call of " + cls.name() + " that two of them accept fails with "
                       "'dispatch is ambiguous'. Fix: declare preferred_over between them; an application may choose "
                       "with prefer_kernels = " + cls.name() + "=<key>, or leave some out with disable_kernels or "
                       "disable_plugins");
  }
  if (unwarned > 0) {
    warnings.push_back(std::to_string(unwarned) + " more kernel type(s) of " + owner_phrase(owner) + " for " +
                       cls.name() + " are ambiguous with others in the same way (not listed one by one)");
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
  std::unordered_map<std::string_view, std::size_t> by_key;
  for (std::size_t i = 0; i < all.size(); ++i) by_key.emplace(all[i].key, i);
  const std::unordered_set<std::string_view> my_key_set(my_keys.begin(), my_keys.end());
  const std::size_t before = out.problems.size();
  for (std::size_t i = cls.kernel_types().size(); i < all.size(); ++i) {
    const RegisteredKernelType& r = registered[i - cls.kernel_types().size()];
    if (r.owner == registrar.owner() && my_key_set.contains(r.key)) review_kernel_type(cls, all[i], all, by_key, out.problems);
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
  std::unordered_set<std::string> seen_ops;
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
    if (r.kind == Registration::Kind::kernel_type && seen_ops.insert(r.op).second) ops.push_back(r.op);
  }
  std::unordered_map<std::string, std::vector<std::string>> keys_by_op;
  for (const Registration& r : registrar.registrations()) {
    if (r.kind == Registration::Kind::kernel_type) keys_by_op[r.op].push_back(r.name);
  }
  for (const std::string& op : ops) {
    const std::shared_ptr<const OpClass> cls = catalogue.find_class(op);
    if (cls) review_op(*cls, registrar, keys_by_op[op], out);
  }
  return out;
}

RegistrationReview review_registrations(const Registrar& registrar) {
  return review_registrations(registrar, OpCatalogue::of_process());
}

}  // namespace tileops::plugin
