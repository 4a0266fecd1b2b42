#include "tileops/ops/reduction.hpp"

#include <algorithm>
#include <numeric>

#include "common/dtype_dispatch.hpp"
#include "reduction_reference.hpp"

namespace tileops {
namespace ref {

namespace {

enum class Reduction { sum, prod, mean };

// The portable reference reduction of x viewed as [outer, reduce, inner] into y as [outer, inner].
template <Reduction kind>
void reduce_reference(const Tensor& x, const Tensor& y, std::int64_t outer, std::int64_t reduce, std::int64_t inner) {
  visit_dtype(x.dtype(), [&]<class In>(TypeTag<In>) {
    visit_dtype(y.dtype(), [&]<class Out>(TypeTag<Out>) {
      const In* in = x.data<In>();
      Out* out = y.data<Out>();
      using Acc = std::conditional_t<std::is_integral_v<Out> && !std::is_same_v<Out, bool>, std::int64_t, double>;
      constexpr bool product = kind == Reduction::prod;
      for (std::int64_t o = 0; o < outer; ++o) {
        for (std::int64_t i = 0; i < inner; ++i) {
          Acc acc = product ? Acc(1) : Acc(0);
          for (std::int64_t r = 0; r < reduce; ++r) {
            const Acc v = static_cast<Acc>(load(in[(o * reduce + r) * inner + i]));
            acc = product ? acc * v : acc + v;
          }
          // The mean of nothing is 0 / 0, NaN, as torch.mean gives it.
          const double result = kind == Reduction::mean ? static_cast<double>(acc) / static_cast<double>(reduce)
                                                        : static_cast<double>(acc);
          out[o * inner + i] = store<Out>(result);
        }
      }
    });
  });
}

}  // namespace

void SumFwdOp::Sum::forward(const Tensor& x, const Tensor& y, std::int64_t outer, std::int64_t reduce,
                            std::int64_t inner) {
  reduce_reference<Reduction::sum>(x, y, outer, reduce, inner);
}

void ProdFwdOp::Prod::forward(const Tensor& x, const Tensor& y, std::int64_t outer, std::int64_t reduce,
                              std::int64_t inner) {
  reduce_reference<Reduction::prod>(x, y, outer, reduce, inner);
}

void MeanFwdOp::Mean::forward(const Tensor& x, const Tensor& y, std::int64_t outer, std::int64_t reduce,
                              std::int64_t inner) {
  reduce_reference<Reduction::mean>(x, y, outer, reduce, inner);
}

}  // namespace ref

namespace {

// The extents of one reduction: x viewed as [outer, reduce, inner].
struct ReduceExtents {
  std::int64_t outer = 1;
  std::int64_t reduce = 1;
  std::int64_t inner = 1;
};

// The axes `dim` names on a tensor of `rank`, normalized and sorted (every axis for None).
std::vector<std::int64_t> reduced_axes(const ReduceDims& dim, std::int64_t rank) {
  std::vector<std::int64_t> axes;
  if (!dim) {
    axes.resize(static_cast<std::size_t>(rank));
    std::iota(axes.begin(), axes.end(), 0);
    return axes;
  }
  std::visit(
      [&](const auto& d) {
        if constexpr (std::is_same_v<std::decay_t<decltype(d)>, std::int64_t>) {
          axes.push_back(normalize_axis(d, rank));
        } else {
          for (std::int64_t a : d) axes.push_back(normalize_axis(a, rank));
        }
      },
      *dim);
  std::sort(axes.begin(), axes.end());
  return axes;
}

DType output_dtype(const std::optional<DType>& requested, DType input) {
  if (requested) return *requested;
  return is_integral(input) || input == DType::bool_ ? DType::int64 : input;
}

// Runs one reduction: moves the reduced axes together (a copy only when they are not already
// adjacent), picks the kernel and shapes the result per keepdim.
template <class Interface>
Tensor reduce(Interface& kernel, const Tensor& input, const std::vector<std::int64_t>& axes, bool keepdim,
              DType out_dtype) {
  const std::int64_t rank = input.dim();
  Tensor x = input.contiguous();
  ReduceExtents e;
  const bool adjacent = axes.empty() || axes.back() - axes.front() + 1 == static_cast<std::int64_t>(axes.size());
  if (adjacent && !axes.empty()) {
    for (std::int64_t d = 0; d < axes.front(); ++d) e.outer *= x.shape()[d];
    for (std::int64_t a : axes) e.reduce *= x.shape()[a];
    for (std::int64_t d = axes.back() + 1; d < rank; ++d) e.inner *= x.shape()[d];
  } else if (!axes.empty()) {
    // Permute kept axes first, reduced axes last, then copy into that order.
    Shape shape, strides;
    for (std::int64_t d = 0; d < rank; ++d) {
      if (!std::binary_search(axes.begin(), axes.end(), d)) {
        shape.push_back(x.shape()[d]);
        strides.push_back(x.strides()[d]);
        e.outer *= x.shape()[d];
      }
    }
    for (std::int64_t a : axes) {
      shape.push_back(x.shape()[a]);
      strides.push_back(x.strides()[a]);
      e.reduce *= x.shape()[a];
    }
    x = x.as_strided(shape, strides, x.offset()).contiguous();
  } else {
    e.outer = x.numel();
  }
  Shape out_shape;
  for (std::int64_t d = 0; d < rank; ++d) {
    const bool reduced = std::binary_search(axes.begin(), axes.end(), d);
    if (!reduced) out_shape.push_back(input.shape()[d]);
    else if (keepdim) out_shape.push_back(1);
  }
  Tensor y = Tensor::empty(out_shape, out_dtype, input.device());
  kernel.forward(x, y, e.outer, e.reduce, e.inner);
  return y;
}

template <class Interface>
OpOutputs run_reduction(Interface& kernel, const CallArgs& args, const ReduceDims& dim, bool keepdim, DType out_dtype) {
  const Tensor& x = args.inputs[0];
  return outputs_of(reduce(kernel, x, reduced_axes(dim, x.dim()), keepdim, out_dtype));
}

template <class Call>
Call reduce_call(const Tensor& x, const ReduceDims& dim, DType out_dtype) {
  Call call;
  call.device = x.device();
  call.in_dtype = x.dtype();
  call.out_dtype = out_dtype;
  const auto axes = reduced_axes(dim, x.dim());
  call.strided = !axes.empty() && axes.back() + 1 < x.dim() &&
                 axes.back() - axes.front() + 1 == static_cast<std::int64_t>(axes.size());
  return call;
}

}  // namespace

OpOutputs SumFwdOp::forward(const CallArgs& args) {
  const DType out = output_dtype(dtype(), args.inputs[0].dtype());
  auto& kernel = kernel_for<ops::SumFwdOp::Sum>(reduce_call<ops::SumFwdOp::Sum::Call>(args.inputs[0], dim(), out));
  return run_reduction(kernel, args, dim(), keepdim(), out);
}

OpOutputs ProdFwdOp::forward(const CallArgs& args) {
  const DType out = output_dtype(dtype(), args.inputs[0].dtype());
  auto& kernel = kernel_for<ops::ProdFwdOp::Prod>(reduce_call<ops::ProdFwdOp::Prod::Call>(args.inputs[0], dim(), out));
  return run_reduction(kernel, args, dim(), keepdim(), out);
}

OpOutputs MeanFwdOp::forward(const CallArgs& args) {
  const DType out = dtype().value_or(args.inputs[0].dtype());
  auto& kernel = kernel_for<ops::MeanFwdOp::Mean>(reduce_call<ops::MeanFwdOp::Mean::Call>(args.inputs[0], dim(), out));
  return run_reduction(kernel, args, dim(), keepdim(), out);
}

}  // namespace tileops
