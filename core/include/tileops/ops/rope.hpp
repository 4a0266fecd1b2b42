// The RoPE family (rotary position embedding), generated from manifests/rope.yaml; core/ops/rope
// holds the forwards. Every op derives RopeFamilyOp, which holds the parameters they share:
// `theta`, the frequency base, and `input_layout`, BSHD (x [B, S, H, D]) or BHSD (x [B, H, S, D]).
// For position p (positions[s], else s), pair i < D/2 turns by angle = p * inv_freq[i]:
//  * RopeFwdOp, the rotate-half (GPT-NeoX, Llama) form: the pair (x[i], x[i + D/2]), and
//    inv_freq[i] = theta^(-2i/D);
//  * RopeInterleavedFwdOp, the GPT-J form: the pair (x[2i], x[2i + 1]), same frequencies;
//  * LongRoPEFwdOp, Phi-3's long-context rotate-half form: inv_freq[i] = theta^(-2i/D) / f[i],
//    f the construction-time long_factor when the sequence (the largest position + 1, else S)
//    is longer than original_max_position_embeddings and short_factor otherwise (float32
//    [D/2] each, checked at construction, copied to each call device once), cos and sin
//    scaled by sqrt(1 + ln(m) / ln(original_max_position_embeddings)) with
//    m = max_position_embeddings / original_max_position_embeddings.
// A pair (a, b) becomes (a cos - b sin, b cos + a sin).
#pragma once

#include "tileops/ops/gen/rope.hpp"
#include "tileops/tensor.hpp"
