#include "tpuc/Interfaces/InferenceInterface.h"

#include "tpuc/Interfaces/InferenceInterface.cpp.inc"
