// The attention ops: GroupedQueryAttentionFwdOp (dense prefill with causal, sliding-window and
// soft-capping options, and the log-sum-exp on request), GroupedQueryAttentionDecodeFwdOp and
// GroupedQueryAttentionPagedDecodeFwdOp (one query token per sequence over a contiguous or a
// paged KV cache), and KVCacheAppendFwdOp and PagedKVCacheAppendFwdOp (the new tokens' keys and
// values written into those caches, in place). The classes are generated from
// manifests/attention.yaml; core/ops/attention holds their forwards.
#pragma once

#include "tileops/ops/gen/attention.hpp"
