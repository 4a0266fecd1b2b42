// MaxPool2dFwdOp and AvgPool2dFwdOp: 2-D max and average pooling over NCHW inputs, as
// torch.nn.functional.max_pool2d (without return_indices) and avg_pool2d. kernel_size, stride
// (None: the kernel size), padding and dilation (max pooling only) are one int for both spatial
// dimensions or a list [height, width]; the per-dimension values are the derived attributes
// kernel_h(), kernel_w(), stride_h(), ... that derive() sets after the base constructor has
// checked the parameters. A NaN in a max pool's window gives NaN; the average's divisor is
// divisor_override, else the window's area clipped to the padded input (count_include_pad) or to
// the input. The classes are generated from manifests/pool.yaml; core/ops/pool holds their
// derive() and forward.
#pragma once

#include "tileops/ops/gen/pool.hpp"
