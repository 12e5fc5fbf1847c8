//===- Log.cpp - Leveled logging ------------------------------------------===//
#include "tpuc/Chip/Log.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tpuc {
namespace chip {

namespace {
LogLevel levelFromEnv() {
  const char *v = std::getenv("TPUC_CHIP_LOG");
  if (!v)
    return LogLevel::Warning;
  if (!std::strcmp(v, "debug"))
    return LogLevel::Debug;
  if (!std::strcmp(v, "info"))
    return LogLevel::Info;
  if (!std::strcmp(v, "error"))
    return LogLevel::Error;
  return LogLevel::Warning;
}

const char *levelName(LogLevel l) {
  switch (l) {
  case LogLevel::Debug:
    return "debug";
  case LogLevel::Info:
    return "info";
  case LogLevel::Warning:
    return "warning";
  default:
    return "error";
  }
}

void stderrSink(LogLevel l, const std::string &msg) {
  std::fprintf(stderr, "[tpuc-chip %s] %s\n", levelName(l), msg.c_str());
}

LogSink gSink = stderrSink;
LogLevel gLevel = levelFromEnv();
} // namespace

void setLogSink(LogSink sink) { gSink = sink ? sink : stderrSink; }
void setLogLevel(LogLevel level) { gLevel = level; }
bool logEnabled(LogLevel level) { return level >= gLevel; }
void log(LogLevel level, const std::string &msg) {
  if (logEnabled(level))
    gSink(level, msg);
}

} // namespace chip
} // namespace tpuc
