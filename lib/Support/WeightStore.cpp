#include "tpuc/Support/WeightStore.h"
#include "tpuc/Support/Npz.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include <mutex>

using namespace llvm;

namespace tpuc {
namespace {

struct FileEntry {
  sys::TimePoint<> mtime;
  bool loaded = false;
  StringMap<WeightData> weights;
};

struct Store {
  std::mutex mu;
  StringMap<FileEntry> files;
};

Store &store() {
  static Store s;
  return s;
}

std::string absolute(StringRef file) {
  SmallString<256> p(file);
  sys::fs::make_absolute(p);
  sys::path::remove_dots(p, /*remove_dot_dot=*/true);
  return p.str().str();
}

// Loads (or reloads, when the file changed on disk) under the store lock.
Error ensureLoaded(StringRef path, FileEntry &entry) {
  sys::fs::file_status st;
  if (sys::fs::status(path, st))
    return entry.loaded || !entry.weights.empty()
               ? Error::success() // in-memory only
               : createStringError(inconvertibleErrorCode(),
                                   "weight file '" + path + "' not found");
  if (entry.loaded && st.getLastModificationTime() == entry.mtime)
    return Error::success();
  auto npz = readNpz(path);
  if (!npz)
    return npz.takeError();
  for (auto &[name, arr] : *npz)
    entry.weights[name] = std::make_shared<const NpyArray>(std::move(arr));
  entry.mtime = st.getLastModificationTime();
  entry.loaded = true;
  return Error::success();
}

} // namespace

std::string getOpName(mlir::Operation *op) {
  mlir::Location loc = op->getLoc();
  if (auto fused = dyn_cast<mlir::FusedLoc>(loc))
    if (!fused.getLocations().empty())
      loc = fused.getLocations().front();
  if (auto name = dyn_cast<mlir::NameLoc>(loc))
    return name.getName().str();
  return "";
}

Expected<WeightData> readWeight(StringRef file, StringRef name) {
  Store &s = store();
  std::lock_guard<std::mutex> lock(s.mu);
  std::string path = absolute(file);
  FileEntry &entry = s.files[path];
  if (Error err = ensureLoaded(path, entry))
    return std::move(err);
  auto it = entry.weights.find(name);
  if (it == entry.weights.end())
    return createStringError(inconvertibleErrorCode(),
                             "weight '" + name + "' not found in '" + file +
                                 "'");
  return it->second;
}

void addWeight(StringRef file, StringRef name, NpyArray data) {
  Store &s = store();
  std::lock_guard<std::mutex> lock(s.mu);
  s.files[absolute(file)].weights[name] =
      std::make_shared<const NpyArray>(std::move(data));
}

void dropWeights(StringRef file) {
  Store &s = store();
  std::lock_guard<std::mutex> lock(s.mu);
  s.files.erase(absolute(file));
}

Error writeWeights(StringRef file, ArrayRef<std::string> names,
                   ArrayRef<std::vector<int64_t>> shapes, StringRef path) {
  NpzFile npz;
  for (auto [name, shape] : llvm::zip(names, shapes)) {
    auto data = readWeight(file, name);
    if (!data)
      return data.takeError();
    NpyArray arr = **data;
    if (arr.numElements() != NpyArray{"", shape, {}}.numElements())
      return createStringError(inconvertibleErrorCode(),
                               "weight '" + name + "' has " +
                                   Twine(arr.numElements()) +
                                   " elements, its type needs another count");
    arr.shape = shape;
    npz[name] = std::move(arr);
  }
  if (Error err = writeNpz(path, npz))
    return err;
  // The new file now holds exactly these arrays; drop any stale cache of it.
  Store &s = store();
  std::lock_guard<std::mutex> lock(s.mu);
  s.files.erase(absolute(path));
  return Error::success();
}

} // namespace tpuc
