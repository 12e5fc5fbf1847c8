//===- Json.h - Small self-contained JSON reader/writer ---------*- C++ -*-===//
//
// Just enough JSON for target descriptions and traces: objects keep key
// order, numbers are doubles, errors are reported with line:column. No
// exceptions, no external dependencies.
//
//===----------------------------------------------------------------------===//
#ifndef TPUC_CHIP_JSON_H
#define TPUC_CHIP_JSON_H

#include "tpuc/Chip/Status.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tpuc {
namespace chip {

class JsonValue {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0.0;
  std::string string;
  std::vector<JsonValue> array;
  std::vector<std::pair<std::string, JsonValue>> object;

  bool isObject() const { return kind == Kind::Object; }
  bool isNumber() const { return kind == Kind::Number; }
  bool isString() const { return kind == Kind::String; }
  /// Returns the member or nullptr.
  const JsonValue *get(const std::string &key) const;
};

Status parseJson(const std::string &text, JsonValue &out);

/// Escapes a string for inclusion in JSON output (adds the quotes).
std::string jsonQuote(const std::string &s);

} // namespace chip
} // namespace tpuc

#endif
