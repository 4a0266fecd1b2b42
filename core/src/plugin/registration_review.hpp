// The check of what a plugin registered, run once its registration function returned and
// before its registrations are kept: the op catalogue's rules that registration alone cannot
// see. Internal: plugin authors reach it through review_registrations(registrar)
// (tileops/extend/plugin_host.hpp).
#pragma once

#include <string>
#include <vector>

#include "plugin/op_catalogue.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/plugin_host.hpp"

namespace tileops::plugin {

// Reviews every kernel type and kernel builder `registrar` registered:
//  * its op must be one `catalogue` knows (else the nearest known names are suggested);
//  * for an op whose class is defined (every in-tree op), each kernel type must implement one of
//    the op's interfaces, must not reuse an in-tree key, must not be a second general
//    implementation of its interface, and may be preferred only over keys of its own interface
//    that exist (a general one over none); the op's whole table must then install (no cycle);
//  * a kernel type that serves an interface on the same devices as another specific one, with
//    neither preferred over the other, is a warning naming both keys, both owners and the fix.
// An op known only from a manifest (an application's, whose class is defined later) gets the
// name check only: constructing it checks the rest, as for any registered kernel type.
RegistrationReview review_registrations(const Registrar& registrar, const OpCatalogue& catalogue);

}  // namespace tileops::plugin
