#include "tpuc/InitAll.h"
#include "tpuc/Dialect/Top/Transforms/Passes.h"
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "tpuc/Dialect/Tpu/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Transforms/Passes.h"

void tpuc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<top::TopDialect, tpu::TpuDialect, mlir::func::FuncDialect,
                  mlir::quant::QuantDialect>();
}

void tpuc::registerAllPasses() {
  top::registerTopPasses();
  tpu::registerTpuPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
}
