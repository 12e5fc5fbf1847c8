//===- PropertyCheck.cpp - Reject unknown `<{...}>` property entries ------===//
//
// The parse is repeated with an AsmParserState, which records where each op
// starts and ends: the text right after a generic op's operand list is its
// `<{...}>` dictionary, whose top-level keys are compared with what the op
// kept.
//
//===----------------------------------------------------------------------===//
#include "tpuc/Support/PropertyCheck.h"
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"

#include <cctype>

using namespace mlir;

namespace {

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

} // namespace

LogicalResult tpuc::checkPropertyNames(llvm::SourceMgr &sm, MLIRContext *context) {
  llvm::StringRef text = sm.getMemoryBuffer(sm.getMainFileID())->getBuffer();
  if (!text.contains("<{"))
    return success(); // no properties written out: nothing to check
  Block block;
  AsmParserState state;
  {
    ScopedDiagnosticHandler quiet(context, [](Diagnostic &) { return success(); });
    if (failed(parseAsmSourceFile(sm, &block, ParserConfig(context), &state)))
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
    auto dict = llvm::dyn_cast_or_null<DictionaryAttr>(op->getPropertiesAsAttribute());
    for (llvm::StringRef key : propertyKeys(rest)) {
      if ((dict && dict.contains(key)) || op->getAttr(key))
        continue;
      return op->emitError() << "'" << op->getName() << "' op has unknown property '"
                             << key << "'";
    }
  }
  return success();
}
