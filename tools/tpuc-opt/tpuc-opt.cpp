// The *-opt driver: every tpuc dialect and pass, for lit tests and debugging.
#include "tpuc/InitAll.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  tpuc::registerAllPasses();
  mlir::DialectRegistry registry;
  tpuc::registerAllDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tpuc optimizer driver\n", registry));
}
