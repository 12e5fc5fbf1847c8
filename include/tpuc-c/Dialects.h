#ifndef TPUC_C_DIALECTS_H
#define TPUC_C_DIALECTS_H
// C API of tpuc's dialects, passes and interpreter, used by the Python
// extension (the only way Python reaches the C++ side).
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Top, top);
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Tpu, tpu);

/// Fails, passing "<location>: <message>" to `onError`, when a generic op in
/// `text` has a `<{...}>` entry it does not define (the parser drops those).
MLIR_CAPI_EXPORTED MlirLogicalResult tpucCheckPropertyNames(
    MlirContext context, MlirStringRef text, MlirStringCallback onError,
    void *errorUserData);

/// Registers every tpuc pass and the upstream ones its pipelines use.
MLIR_CAPI_EXPORTED void tpucRegisterAllPasses(void);

/// A named float32 tensor crossing the C boundary (borrowed memory).
typedef struct {
  MlirStringRef name;
  const float *data;
  const int64_t *shape;
  intptr_t rank;
} TpucTensorView;

typedef void (*TpucTensorCallback)(TpucTensorView tensor, void *userData);

/// Interprets the module's entry function. Each result (or, with allTensors,
/// every named op result) is passed to `onTensor`; on failure the error text
/// goes to `onError` and the result is failure. `references` (may be empty)
/// run every op on reference inputs (tpuc::interpret's local mode).
MLIR_CAPI_EXPORTED MlirLogicalResult tpucInterpret(
    MlirModule module, const TpucTensorView *inputs, intptr_t numInputs,
    const TpucTensorView *references, intptr_t numReferences,
    bool allTensors, TpucTensorCallback onTensor, void *tensorUserData,
    MlirStringCallback onError, void *errorUserData);

/// Writes the module's weights to `path` and points the module at it.
MLIR_CAPI_EXPORTED MlirLogicalResult tpucSaveWeights(MlirModule module,
                                                     MlirStringRef path);

/// Hands a typed array to the process-wide weight store as weight `name`
/// of `file` (which need not exist on disk: a module whose
/// `top.weight_file` names it reads the weights from memory). `descr` is the
/// numpy dtype string ("<f4", "|i1", ...), `data` its C-order bytes.
MLIR_CAPI_EXPORTED void tpucAddWeight(MlirStringRef file, MlirStringRef name,
                                      MlirStringRef descr, const void *data,
                                      intptr_t numBytes, const int64_t *shape,
                                      intptr_t rank);

/// Forgets every weight registered under `file`.
MLIR_CAPI_EXPORTED void tpucDropWeights(MlirStringRef file);

#ifdef __cplusplus
}
#endif
#endif
