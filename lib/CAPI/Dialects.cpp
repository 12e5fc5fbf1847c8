#include "tpuc-c/Dialects.h"
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Dialect/Top/Transforms/Passes.h"
#include "tpuc/Dialect/Top/Utils.h"
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "tpuc/InitAll.h"
#include "tpuc/Interpreter/Interpreter.h"
#include "tpuc/Support/OpHelpers.h"
#include "tpuc/Support/PropertyCheck.h"
#include "tpuc/Support/WeightStore.h"
#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Top, top, top::TopDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Tpu, tpu, tpu::TpuDialect)

void tpucRegisterAllPasses(void) { tpuc::registerAllPasses(); }

MlirLogicalResult tpucCheckPropertyNames(MlirContext context, MlirStringRef text,
                                         MlirStringCallback onError,
                                         void *errorUserData) {
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBuffer(unwrap(text), "",
                                                         /*RequiresNullTerminator=*/false),
                        llvm::SMLoc());
  mlir::MLIRContext *ctx = unwrap(context);
  std::string msg;
  mlir::ScopedDiagnosticHandler capture(ctx, [&](mlir::Diagnostic &d) {
    if (msg.empty() && d.getSeverity() == mlir::DiagnosticSeverity::Error) {
      llvm::raw_string_ostream os(msg);
      os << d.getLocation() << ": " << d.str();
    }
    return mlir::success();
  });
  if (mlir::succeeded(tpuc::checkPropertyNames(sm, ctx)))
    return mlirLogicalResultSuccess();
  onError(mlirStringRefCreate(msg.data(), msg.size()), errorUserData);
  return mlirLogicalResultFailure();
}

static tpuc::TensorList toTensorList(const TpucTensorView *views, intptr_t n) {
  tpuc::TensorList out;
  for (intptr_t i = 0; i < n; ++i) {
    const TpucTensorView &v = views[i];
    tpuc::HostTensor t;
    t.shape.assign(v.shape, v.shape + v.rank);
    t.data.assign(v.data, v.data + tpuc::numElements(t.shape));
    out.push_back({unwrap(v.name).str(), std::move(t)});
  }
  return out;
}

MlirLogicalResult tpucInterpret(MlirModule module, const TpucTensorView *inputs,
                                intptr_t numInputs,
                                const TpucTensorView *references,
                                intptr_t numReferences, bool allTensors,
                                TpucTensorCallback onTensor,
                                void *tensorUserData, MlirStringCallback onError,
                                void *errorUserData) {
  auto out = tpuc::interpret(unwrap(module), toTensorList(inputs, numInputs),
                             allTensors,
                             toTensorList(references, numReferences));
  if (!out) {
    std::string msg = llvm::toString(out.takeError());
    onError(mlirStringRefCreate(msg.data(), msg.size()), errorUserData);
    return mlirLogicalResultFailure();
  }
  for (auto &[name, t] : *out)
    onTensor(TpucTensorView{mlirStringRefCreate(name.data(), name.size()),
                            t.data.data(), t.shape.data(),
                            intptr_t(t.shape.size())},
             tensorUserData);
  return mlirLogicalResultSuccess();
}

MlirLogicalResult tpucSaveWeights(MlirModule module, MlirStringRef path) {
  return wrap(top::saveWeights(unwrap(module), unwrap(path)));
}

void tpucAddWeight(MlirStringRef file, MlirStringRef name, MlirStringRef descr,
                   const void *data, intptr_t numBytes, const int64_t *shape,
                   intptr_t rank) {
  tpuc::NpyArray a;
  a.descr = unwrap(descr).str();
  a.shape.assign(shape, shape + rank);
  const char *bytes = static_cast<const char *>(data);
  a.data.assign(bytes, bytes + numBytes);
  tpuc::addWeight(unwrap(file), unwrap(name), std::move(a));
}

void tpucDropWeights(MlirStringRef file) { tpuc::dropWeights(unwrap(file)); }
