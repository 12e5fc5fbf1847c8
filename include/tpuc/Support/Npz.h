#ifndef TPUC_SUPPORT_NPZ_H
#define TPUC_SUPPORT_NPZ_H
// Reading and writing numpy .npy arrays inside .npz (zip) archives, the
// on-disk format of every weight file and tensor dump.
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace tpuc {

struct NpyArray {
  std::string descr;          // numpy dtype string, e.g. "<f4"
  std::vector<int64_t> shape;
  std::vector<char> data;     // raw little-endian element bytes, C order

  int64_t numElements() const;
  /// Elements converted to float32; fails for dtypes it cannot represent.
  llvm::Expected<std::vector<float>> toFloat() const;
  static NpyArray fromFloat(llvm::ArrayRef<float> values,
                            llvm::ArrayRef<int64_t> shape);
  /// An array of `descr` ("|i1", "<i4", "<f2", "<u2", ...) holding `values`.
  template <typename T>
  static NpyArray of(llvm::StringRef descr, llvm::ArrayRef<T> values,
                     llvm::ArrayRef<int64_t> shape) {
    NpyArray a;
    a.descr = descr.str();
    a.shape.assign(shape.begin(), shape.end());
    a.data.resize(values.size() * sizeof(T));
    if (!values.empty())
      std::memcpy(a.data.data(), values.data(), a.data.size());
    return a;
  }
};

/// Ordered by name, as numpy's own reader lists them.
using NpzFile = std::map<std::string, NpyArray>;

/// Reads every array of an uncompressed .npz (np.savez). Errors name the file
/// and what is wrong with it.
llvm::Expected<NpzFile> readNpz(llvm::StringRef path);
/// Writes an uncompressed .npz that numpy.load reads.
llvm::Error writeNpz(llvm::StringRef path, const NpzFile &arrays);

} // namespace tpuc
#endif
