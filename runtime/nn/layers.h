#pragma once
// The layers models are built from, one family per header: Linear [N,in] -> [N,out]; Conv2D,
// pools, ReLU, Dropout, BatchNorm2D on [N,C,H,W]; Flatten [N,...] -> [N,rest]; Embedding ids
// [N,slots] -> [N,slots*dim]. Every layer runs on the CPU or, once placed there, on a CUDA device.

#include "runtime/nn/activation.h"
#include "runtime/nn/batch_norm.h"
#include "runtime/nn/conv2d.h"
#include "runtime/nn/dropout.h"
#include "runtime/nn/embedding.h"
#include "runtime/nn/flatten.h"
#include "runtime/nn/linear.h"
#include "runtime/nn/pooling.h"
