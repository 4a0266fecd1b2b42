// EmbeddingFwdOp: y[*S, :] = weight[ids[*S], :], the token embedding lookup, for int32 or int64
// ids of any shape. An id outside [0, V) raises ValueError naming it, its position and V
// before anything is read; on the host that check runs in forward, over every id. The class
// is generated from manifests/embedding.yaml; core/ops/embedding holds its forward.
#pragma once

#include "tileops/ops/gen/embedding.hpp"
