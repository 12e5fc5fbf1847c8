#ifndef TPUC_SUPPORT_OPHELPERS_H
#define TPUC_SUPPORT_OPHELPERS_H
// Small accessors shared by op verifiers, shape inference and interpreters.
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"
#include <string>
#include <utility>

namespace tpuc {

inline llvm::SmallVector<int64_t> getI64s(mlir::ArrayAttr attr) {
  llvm::SmallVector<int64_t> out;
  for (mlir::Attribute a : attr)
    out.push_back(llvm::cast<mlir::IntegerAttr>(a).getInt());
  return out;
}

inline bool isRanked(mlir::Value v) {
  return llvm::isa<mlir::RankedTensorType>(v.getType());
}

/// Shape of a ranked tensor value (empty for unranked or none values).
inline llvm::ArrayRef<int64_t> getShape(mlir::Value v) {
  if (auto t = llvm::dyn_cast<mlir::RankedTensorType>(v.getType()))
    return t.getShape();
  return {};
}

inline int64_t numElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

inline bool isNone(mlir::Value v) {
  return !v || llvm::isa<mlir::NoneType>(v.getType());
}

/// Normalizes a possibly negative axis; returns -1 when out of range.
inline int64_t normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < 0)
    axis += rank;
  return axis >= 0 && axis < rank ? axis : -1;
}

/// A transpose with its unit dims dropped and the input dims that stay
/// adjacent in the output merged: the reduced input shape and order (output
/// dim i is reduced input dim order[i]). Moves the same elements.
inline std::pair<llvm::SmallVector<int64_t>, llvm::SmallVector<int64_t>>
simplifyPermute(llvm::ArrayRef<int64_t> inShape,
                llvm::ArrayRef<int64_t> order) {
  llvm::SmallVector<llvm::SmallVector<int64_t>> groups; // in output order
  for (int64_t d : order) {
    if (inShape[d] == 1)
      continue;
    if (!groups.empty() && groups.back().back() + 1 == d)
      groups.back().push_back(d);
    else
      groups.push_back({d});
  }
  llvm::SmallVector<int64_t> byInput(groups.size());
  for (size_t i = 0; i < groups.size(); ++i)
    byInput[i] = i;
  llvm::sort(byInput, [&](int64_t a, int64_t b) {
    return groups[a].front() < groups[b].front();
  });
  llvm::SmallVector<int64_t> shape, perm(groups.size());
  for (size_t j = 0; j < byInput.size(); ++j) {
    int64_t n = 1;
    for (int64_t d : groups[byInput[j]])
      n *= inShape[d];
    shape.push_back(n);
    perm[byInput[j]] = j;
  }
  return {shape, perm};
}

/// `loc` with `suffix` appended to its name: the location of a tensor a
/// rewrite adds beside the named one (of another shape or layout).
inline mlir::Location withNameSuffix(mlir::Location loc,
                                     llvm::StringRef suffix) {
  if (auto n = llvm::dyn_cast<mlir::NameLoc>(loc))
    return mlir::NameLoc::get(
        mlir::StringAttr::get(loc.getContext(),
                              n.getName().str() + suffix.str()),
        n.getChildLoc());
  return loc;
}

/// "[2, 3, 4]", for diagnostics.
inline std::string shapeToString(llvm::ArrayRef<int64_t> shape) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "[";
  llvm::interleaveComma(shape, os);
  os << "]";
  return out;
}

} // namespace tpuc
#endif
