//===- Json.h - JSON for target descriptions and traces ---------*- C++ -*-===//
//
// The chip library reads and writes JSON through llvm::json (LLVM's Support
// library); these helpers turn its errors into a Status naming line:column.
//
//===----------------------------------------------------------------------===//
#ifndef TPUC_CHIP_JSON_H
#define TPUC_CHIP_JSON_H

#include "tpuc/Chip/Status.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace tpuc {
namespace chip {

/// Parses `text`; on failure "JSON parse error at line L, column C: reason".
Status parseJson(const std::string &text, llvm::json::Value &out);

/// Escapes a string for inclusion in JSON output (adds the quotes).
std::string jsonQuote(const std::string &s);

} // namespace chip
} // namespace tpuc

#endif
