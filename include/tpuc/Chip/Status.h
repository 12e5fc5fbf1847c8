//===- Status.h - Error reporting without exceptions ------------*- C++ -*-===//
//
// The chip library is built with -fno-exceptions, so every fallible call
// returns a Status carrying a human-readable message instead of throwing.
//
//===----------------------------------------------------------------------===//
#ifndef TPUC_CHIP_STATUS_H
#define TPUC_CHIP_STATUS_H

#include <string>
#include <utility>

namespace tpuc {
namespace chip {

class [[nodiscard]] Status {
public:
  Status() = default;
  static Status OK() { return Status(); }
  static Status error(std::string msg) {
    Status s;
    s.failed_ = true;
    s.msg_ = std::move(msg);
    return s;
  }
  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const std::string &message() const { return msg_; }
  /// Prefixes the message with context ("while reading X: ...").
  Status withContext(const std::string &ctx) const {
    if (ok())
      return *this;
    return error(ctx + ": " + msg_);
  }

private:
  bool failed_ = false;
  std::string msg_;
};

#define TPUC_RETURN_IF_ERROR(expr)                                             \
  do {                                                                         \
    ::tpuc::chip::Status _st = (expr);                                         \
    if (!_st.ok())                                                             \
      return _st;                                                              \
  } while (0)

} // namespace chip
} // namespace tpuc

#endif
