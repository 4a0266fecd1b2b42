// Rows 3..6 of a torch tensor (a view) go to tileops' RMSNormFwdOp through DLPack, and the
// result comes back to torch; both directions share memory. Exits 0 when tileops agrees with
// the same normalisation computed by torch.
#include <torch/torch.h>
#include <ATen/DLConvertor.h>

#include <tileops/dlpack.hpp>
#include <tileops/ops/rms_norm.hpp>

#include <iostream>

int main() {
  const torch::Tensor x = torch::randn({8, 64});
  const torch::Tensor rows = x.slice(0, 3, 7);

  const tileops::Tensor input = tileops::from_dlpack(at::toDLPack(rows));
  tileops::RMSNormFwdOp norm({64}, 1e-6);
  const torch::Tensor y = at::fromDLPack(tileops::to_dlpack(norm(input)));

  const torch::Tensor expected = rows * torch::rsqrt(rows.pow(2).mean(-1, true) + 1e-6);
  const double error = (y - expected).abs().max().item<double>();
  std::cout << "torch -> tileops -> torch: max abs error " << error << "\n";
  return error < 1e-5 ? 0 : 1;
}
