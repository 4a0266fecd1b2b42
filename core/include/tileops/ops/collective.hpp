// AllReduceFwdOp, AllGatherFwdOp and ReduceScatterFwdOp: collectives over the ranks of a
// communicator (tileops/communicator.hpp), named by its key in the `communicator` parameter,
// or "self", this rank alone. AllGatherFwdOp and ReduceScatterFwdOp take the group's
// world_size too, since their output shapes depend on it; construction checks it against the
// communicator, and that the key names a live communicator (the derived communicator_id()).
// A call runs on its communicator's device, queued on that device's current stream; a
// communicator of another device is refused naming both. The classes are generated from
// manifests/collective.yaml; core/ops/collective holds their derive() and forward.
#pragma once

#include "tileops/ops/gen/collective.hpp"
