//===- Json.cpp - JSON through llvm::json ---------------------------------===//
#include "tpuc/Chip/Json.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdio>

namespace tpuc {
namespace chip {

Status parseJson(const std::string &text, llvm::json::Value &out) {
  llvm::Expected<llvm::json::Value> v = llvm::json::parse(text);
  if (v) {
    out = std::move(*v);
    return Status::OK();
  }
  // llvm::json::ParseError logs "[line:column, byte=offset]: reason".
  std::string msg = llvm::toString(v.takeError());
  unsigned line = 0, col = 0, byte = 0;
  int consumed = 0;
  if (std::sscanf(msg.c_str(), "[%u:%u, byte=%u]: %n", &line, &col, &byte, &consumed) == 3 &&
      consumed > 0)
    return Status::error("JSON parse error at line " + std::to_string(line) + ", column " +
                         std::to_string(col) + ": " + msg.substr(consumed));
  return Status::error("JSON parse error: " + msg);
}

std::string jsonQuote(const std::string &s) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::json::Value(s);
  return out;
}

} // namespace chip
} // namespace tpuc
