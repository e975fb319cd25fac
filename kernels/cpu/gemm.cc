#include "kernels/gemm.h"

#include <Eigen/Core>

namespace paddle::kernels::cpu {
namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<Matrix>;
using ConstMatrixMap = Eigen::Map<const Matrix>;

}  // namespace

void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, const float* a, const float* b, float* c,
          bool accumulate) {
  MatrixMap out(c, m, n);
  ConstMatrixMap A(a, transpose_a ? k : m, transpose_a ? m : k);
  ConstMatrixMap B(b, transpose_b ? n : k, transpose_b ? k : n);
  if (!accumulate) out.setZero();
  if (!transpose_a && !transpose_b) out.noalias() += A * B;
  else if (transpose_a && !transpose_b) out.noalias() += A.transpose() * B;
  else if (!transpose_a && transpose_b) out.noalias() += A * B.transpose();
  else out.noalias() += A.transpose() * B.transpose();
}

void add_bias_rows(float* y, const float* bias, int m, int n) {
  MatrixMap Y(y, m, n);
  Eigen::Map<const Eigen::RowVectorXf> b(bias, n);
  Y.rowwise() += b;
}

void bias_grad_rows(const float* dy, float* db, int m, int n) {
  ConstMatrixMap DY(dy, m, n);
  Eigen::Map<Eigen::RowVectorXf> b(db, n);
  b += DY.colwise().sum();
}

}  // namespace paddle::kernels::cpu
