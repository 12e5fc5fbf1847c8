//===- Pipelines.cpp - tpuc's named pass pipelines ------------------------===//
#include "tpuc/Pipelines/Pipelines.h"
#include "tpuc/Backend/Passes.h"
#include "tpuc/Conversion/Passes.h"
#include "tpuc/Dialect/Top/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void tpuc::buildTopTransformPassPipeline(OpPassManager &pm) {
  pm.addPass(top::createTopShapeInfer());
  pm.addPass(createCanonicalizerPass());
}

void tpuc::buildTopToTpuPassPipeline(OpPassManager &pm,
                                     const TopToTpuPipelineOptions &o) {
  ConvertTopToTpuOptions lowering;
  lowering.mode = o.mode;
  lowering.chip = o.chip;
  lowering.calibrationTable = o.calibrationTable;
  lowering.asymmetric = o.asymmetric;
  lowering.quantizeTable = o.quantizeTable;
  lowering.fallback = o.fallback;
  pm.addPass(createConvertTopToTpu(lowering));
  pm.addPass(createCanonicalizerPass());
}

void tpuc::buildTpuCodegenPassPipeline(OpPassManager &pm,
                                       const CodegenPipelineOptions &o) {
  // Groups first: sliced groups keep their tensors' DDR buffers apart.
  if (o.layerGroup) {
    backend::RecomputeScaledMapOptions recompute;
    recompute.chip = o.chip;
    pm.addPass(backend::createRecomputeScaledMap(recompute));
    backend::FoldNormAffineOptions norm;
    norm.chip = o.chip;
    pm.addPass(backend::createFoldNormAffine(norm));
    backend::FoldScaleOptions scale;
    scale.chip = o.chip;
    pm.addPass(backend::createFoldScale(scale));
    backend::TransposeLinearOptions linear;
    linear.chip = o.chip;
    pm.addPass(backend::createTransposeLinear(linear));
    backend::RowGatherAsMatMulOptions gather;
    gather.chip = o.chip;
    pm.addPass(backend::createRowGatherAsMatMul(gather));
    backend::MaskedWindowAttentionOptions windows;
    windows.chip = o.chip;
    pm.addPass(backend::createMaskedWindowAttention(windows));
    backend::TransposeAsMatMulOptions transpose;
    transpose.chip = o.chip;
    pm.addPass(backend::createTransposeAsMatMul(transpose));
    backend::LayerGroupOptions group;
    group.chip = o.chip;
    pm.addPass(backend::createLayerGroup(group));
  }
  backend::AssignAddressOptions address;
  address.chip = o.chip;
  address.layerGroup = o.layerGroup;
  pm.addPass(backend::createAssignAddress(address));
  backend::CodegenOptions codegen;
  codegen.chip = o.chip;
  codegen.bmodel = o.bmodel;
  codegen.layerGroup = o.layerGroup;
  codegen.weightPrefetch = o.weightPrefetch;
  pm.addPass(backend::createCodegen(codegen));
}

void tpuc::registerPassPipelines() {
  PassPipelineRegistration<>(
      "top-transform-pipeline",
      "Top cleanup after import: shape inference and canonicalization",
      buildTopTransformPassPipeline);
  PassPipelineRegistration<TopToTpuPipelineOptions>(
      "top-to-tpu-pipeline",
      "Lower Top to Tpu for a quantization mode, then canonicalize",
      buildTopToTpuPassPipeline);
  PassPipelineRegistration<CodegenPipelineOptions>(
      "tpu-codegen-pipeline",
      "Form layer groups, assign addresses, emit instructions and the bmodel",
      buildTpuCodegenPassPipeline);
}
