#include "tpuc/InitAll.h"
#include "tpuc/Backend/CodegenInterface.h"
#include "tpuc/Backend/Passes.h"
#include "tpuc/Conversion/Passes.h"
#include "tpuc/Conversion/TopToTpu/Quantize.h"
#include "tpuc/Dialect/Top/Transforms/Passes.h"
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "tpuc/Pipelines/Pipelines.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Transforms/Passes.h"

void tpuc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<top::TopDialect, tpu::TpuDialect, mlir::func::FuncDialect,
                  mlir::quant::QuantDialect>();
  tpuc::backend::registerCodegenExternalModels(registry);
  tpuc::registerQuantizeExternalModels(registry);
}

void tpuc::registerAllPasses() {
  top::registerTopPasses();
  tpuc::registerConversionPasses();
  tpuc::backend::registerBackendPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  tpuc::registerPassPipelines();
}
