#pragma once
// The three cuDNN convolution calls of conv.cu on tensors of one data type and layout, float32
// NCHW for kernels/conv.h and 16-bit NHWC for kernels/autocast_conv.h (cuDNN's tensor-core
// kernels want channels last; given 16-bit NCHW, its legacy API measured CUDA-core kernels
// fastest); defined in conv.cu. The compute type is float32 always. Float32 tensors run on FMA
// math, or TF32 tensor cores when the handles allow them; 16-bit ones on tensor cores
// (CUDNN_TENSOR_OP_MATH). The algorithm is the fastest cuDNN measures the first time a shape,
// type and layout come by, then cached in the handles.

#include <cudnn.h>

#include "kernels/conv.h"

namespace paddle::kernels::cuda {

// y = conv(x, w), overwritten.
void cudnn_conv_forward(Handles& h, cudnnDataType_t type, cudnnTensorFormat_t layout, const ConvShape& s, int batch,
                        int out_channels, const void* x, const void* w, void* y);
// dx = data gradient, overwritten.
void cudnn_conv_backward_data(Handles& h, cudnnDataType_t type, cudnnTensorFormat_t layout, const ConvShape& s,
                              int batch, int out_channels, const void* w, const void* dy, void* dx);
// dw = filter gradient, or dw += it with accumulate.
void cudnn_conv_backward_filter(Handles& h, cudnnDataType_t type, cudnnTensorFormat_t layout, const ConvShape& s,
                                int batch, int out_channels, const void* x, const void* dy, void* dw, bool accumulate);

}  // namespace paddle::kernels::cuda
