// The *-opt driver: every tpuc dialect and pass, for lit tests and debugging.
//
// Unlike a bare MlirOptMain, an error reported while a pass runs (e.g. an
// unreadable weight file met by a folding pattern, which cannot fail its
// pass) fails the run: the tool exits 1 and prints no module. Errors do not
// print the failing operation (which for a module is the whole input) unless
// -mlir-print-op-on-diagnostic is given. An entry of a generic op's
// `<{...}>` properties that the op does not define is an error (MLIR's
// parser drops it silently).
#include "tpuc/InitAll.h"
#include "tpuc/Support/PropertyCheck.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <memory>
#include <vector>

using namespace mlir;

namespace {
/// Ends the pipeline: fails when any error diagnostic was reported so far.
struct FailOnReportedErrors
    : PassWrapper<FailOnReportedErrors, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FailOnReportedErrors)
  explicit FailOnReportedErrors(std::shared_ptr<std::atomic<int>> errors)
      : errors(std::move(errors)) {}
  StringRef getArgument() const override { return "tpuc-fail-on-errors"; }
  void runOnOperation() override {
    if (errors->load() > 0)
      signalPassFailure();
  }
  std::shared_ptr<std::atomic<int>> errors;
};

/// Checks the property names of one split of the input in a fresh context,
/// printing an error against the input's text.
LogicalResult checkPropertyNames(std::unique_ptr<llvm::MemoryBuffer> buffer,
                                 DialectRegistry &registry, bool allowUnregistered) {
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  MLIRContext context(registry);
  context.allowUnregisteredDialects(allowUnregistered);
  SourceMgrDiagnosticHandler print(sm, &context);
  return tpuc::checkPropertyNames(sm, &context);
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  tpuc::registerAllPasses();
  DialectRegistry registry;
  tpuc::registerAllDialects(registry);
  std::vector<char *> args(argv, argv + argc);
  static char quiet[] = "--mlir-print-op-on-diagnostic=false";
  if (llvm::none_of(args, [](const char *a) {
        return llvm::StringRef(a).ltrim('-').starts_with("mlir-print-op-on-diagnostic");
      }))
    args.insert(args.begin() + 1, quiet);
  auto [inputFile, outputFile] = registerAndParseCLIOptions(
      int(args.size()), args.data(), "tpuc optimizer driver\n", registry);

  MlirOptMainConfig base = MlirOptMainConfig::createFromCLOptions();
  MlirOptMainConfig config = base;
  if (!base.shouldVerifyDiagnostics()) {
    config.setPassPipelineSetupFn([base](PassManager &pm) -> LogicalResult {
      if (failed(base.setupPassPipeline(pm)))
        return failure();
      auto errors = std::make_shared<std::atomic<int>>(0);
      // Counts errors and lets the next handler print them.
      pm.getContext()->getDiagEngine().registerHandler(
          [errors](Diagnostic &d) -> LogicalResult {
            if (d.getSeverity() == DiagnosticSeverity::Error)
              ++*errors;
            return failure();
          });
      pm.addPass(std::make_unique<FailOnReportedErrors>(errors));
      return success();
    });
  }

  std::string message;
  auto input = openInputFile(inputFile, &message);
  if (!input) {
    llvm::errs() << "tpuc-opt: " << message << "\n";
    return 1;
  }
  if (!base.shouldVerifyDiagnostics() &&
      failed(splitAndProcessBuffer(
          llvm::MemoryBuffer::getMemBufferCopy(input->getBuffer(),
                                               input->getBufferIdentifier()),
          [&](std::unique_ptr<llvm::MemoryBuffer> chunk, llvm::raw_ostream &) {
            return checkPropertyNames(std::move(chunk), registry,
                                      base.shouldAllowUnregisteredDialects());
          },
          llvm::nulls(), base.inputSplitMarker())))
    return 1;
  auto output = openOutputFile(outputFile, &message);
  if (!output) {
    llvm::errs() << "tpuc-opt: " << message << "\n";
    return 1;
  }
  if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
