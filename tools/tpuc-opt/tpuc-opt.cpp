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
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/BuiltinAttributes.h"
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
#include <cctype>
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
/// Top-level keys of the `<{...}>` dictionary whose body starts `text`.
llvm::SmallVector<llvm::StringRef> propertyKeys(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> keys;
  int depth = 0;
  bool expectKey = true;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == '"') { // a string, maybe a quoted key: skip to its end
      size_t j = i + 1;
      while (j < text.size() && text[j] != '"')
        j += text[j] == '\\' ? 2 : 1;
      if (depth == 0 && expectKey) {
        keys.push_back(text.slice(i + 1, j));
        expectKey = false;
      }
      i = j + 1;
      continue;
    }
    bool arrow = c == '>' && i > 0 && text[i - 1] == '-'; // a function type
    if (c == '{' || c == '[' || c == '(' || c == '<') {
      ++depth;
    } else if ((c == '}' || c == ']' || c == ')' || c == '>') && !arrow) {
      if (depth == 0)
        return keys;
      --depth;
    } else if (depth == 0 && c == ',') {
      expectKey = true;
    } else if (depth == 0 && expectKey && (std::isalpha(uint8_t(c)) || c == '_')) {
      size_t j = i;
      while (j < text.size() &&
             (std::isalnum(uint8_t(text[j])) || llvm::StringRef("_$.").contains(text[j])))
        ++j;
      keys.push_back(text.slice(i, j));
      expectKey = false;
      i = j;
      continue;
    }
    ++i;
  }
  return keys;
}

/// Parses `buffer` once more, recording where each op is, and reports the
/// first `<{...}>` entry of a generic-form op that did not become one of its
/// attributes. Syntax errors are left to the real run to report.
LogicalResult checkPropertyNames(std::unique_ptr<llvm::MemoryBuffer> buffer,
                                 DialectRegistry &registry, bool allowUnregistered) {
  llvm::SourceMgr sm;
  llvm::StringRef text = buffer->getBuffer();
  sm.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  MLIRContext context(registry);
  context.allowUnregisteredDialects(allowUnregistered);
  Block block;
  AsmParserState state;
  {
    ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) { return success(); });
    if (failed(parseAsmSourceFile(sm, &block, ParserConfig(&context), &state)))
      return success();
  }
  for (const AsmParserState::OperationDefinition &def : state.getOpDefs()) {
    const char *end = def.loc.End.getPointer();
    if (!def.loc.Start.isValid() || *def.loc.Start.getPointer() != '"')
      continue; // custom form
    llvm::StringRef rest = text.substr(size_t(end - text.data())).ltrim();
    if (!rest.consume_front("("))
      continue;
    size_t close = rest.find(')');
    if (close == llvm::StringRef::npos)
      continue;
    rest = rest.substr(close + 1).ltrim();
    if (!rest.consume_front("<{"))
      continue;
    Operation *op = def.op;
    Attribute props = op->getPropertiesAsAttribute();
    auto dict = llvm::dyn_cast_or_null<DictionaryAttr>(props);
    for (llvm::StringRef key : propertyKeys(rest)) {
      if ((dict && dict.contains(key)) || op->getAttr(key))
        continue;
      SourceMgrDiagnosticHandler print(sm, &context);
      op->emitError() << "'" << op->getName() << "' op has unknown property '" << key << "'";
      return failure();
    }
  }
  return success();
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
