//===- Pipelines.h - tpuc's named pass pipelines ----------------*- C++ -*-===//
//
// The compiler's stages as named pipelines, so the Python flow, tpuc-opt and
// lit tests run the same pass sequence:
//   top-transform-pipeline  Top cleanup after import (shape inference, folds)
//   top-to-tpu-pipeline     lowering for a quantization mode
//   tpu-codegen-pipeline    layer groups, addresses, instructions, bmodel
//
//===----------------------------------------------------------------------===//
#ifndef TPUC_PIPELINES_PIPELINES_H
#define TPUC_PIPELINES_PIPELINES_H
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace tpuc {

struct TopToTpuPipelineOptions
    : mlir::PassPipelineOptions<TopToTpuPipelineOptions> {
  Option<tpu::LoweringMode> mode{
      *this, "mode", llvm::cl::desc("Quantization mode"),
      llvm::cl::init(tpu::LoweringMode::F32),
      llvm::cl::values(
          clEnumValN(tpu::LoweringMode::F32, "F32", "float32"),
          clEnumValN(tpu::LoweringMode::F16, "F16", "float16"),
          clEnumValN(tpu::LoweringMode::BF16, "BF16", "bfloat16"),
          clEnumValN(tpu::LoweringMode::INT8, "INT8", "int8"))};
  Option<std::string> chip{*this, "chip", llvm::cl::desc("Target chip"),
                           llvm::cl::init("tpu_edge")};
  Option<std::string> calibrationTable{
      *this, "calibration-table", llvm::cl::desc("Calibration table (INT8)"),
      llvm::cl::init("")};
  Option<bool> asymmetric{*this, "asymmetric",
                          llvm::cl::desc("INT8 activations with zero points"),
                          llvm::cl::init(false)};
  Option<std::string> quantizeTable{
      *this, "quantize-table", llvm::cl::desc("Per-op modes overriding mode"),
      llvm::cl::init("")};
  Option<tpu::LoweringMode> fallback{
      *this, "fallback",
      llvm::cl::desc("Float mode of INT8 ops without an integer form"),
      llvm::cl::init(tpu::LoweringMode::F16),
      llvm::cl::values(
          clEnumValN(tpu::LoweringMode::F32, "F32", "float32"),
          clEnumValN(tpu::LoweringMode::F16, "F16", "float16"),
          clEnumValN(tpu::LoweringMode::BF16, "BF16", "bfloat16"))};
};

struct CodegenPipelineOptions
    : mlir::PassPipelineOptions<CodegenPipelineOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("Target chip"),
                           llvm::cl::init("tpu_edge")};
  Option<std::string> bmodel{*this, "bmodel",
                             llvm::cl::desc("Output .bmodel (empty: none)"),
                             llvm::cl::init("")};
  Option<bool> layerGroup{*this, "layer-group",
                          llvm::cl::desc("Form and emit layer groups"),
                          llvm::cl::init(true)};
  Option<bool> weightPrefetch{
      *this, "weight-prefetch",
      llvm::cl::desc("Load DDR-bound ops' first weights during the ops "
                     "before them"),
      llvm::cl::init(true)};
};

void buildTopTransformPassPipeline(mlir::OpPassManager &pm);
void buildTopToTpuPassPipeline(mlir::OpPassManager &pm,
                               const TopToTpuPipelineOptions &options);
void buildTpuCodegenPassPipeline(mlir::OpPassManager &pm,
                                 const CodegenPipelineOptions &options);

void registerPassPipelines();

} // namespace tpuc
#endif
