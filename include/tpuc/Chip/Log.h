//===- Log.h - Minimal leveled logging for the chip library ----*- C++ -*-===//
//
// Library code never prints directly; it logs through a replaceable sink so
// embedding tools (the Python runtime, the compiler) can route messages.
// Default sink writes to stderr for messages at or above the level given by
// the TPUC_CHIP_LOG environment variable (debug|info|warning|error; default
// warning).
//
//===----------------------------------------------------------------------===//
#ifndef TPUC_CHIP_LOG_H
#define TPUC_CHIP_LOG_H

#include <string>

namespace tpuc {
namespace chip {

enum class LogLevel { Debug = 0, Info = 1, Warning = 2, Error = 3 };

using LogSink = void (*)(LogLevel, const std::string &);

/// Replaces the sink; passing nullptr restores the default stderr sink.
void setLogSink(LogSink sink);
void setLogLevel(LogLevel level);
bool logEnabled(LogLevel level);
void log(LogLevel level, const std::string &msg);

} // namespace chip
} // namespace tpuc

#endif
