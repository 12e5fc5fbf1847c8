// tpuc-npz-check: reads .npz/.npy files with the C++ reader the compiler uses
// for weights and prints each array's name, dtype and shape, or the one-line
// error. Small enough to build under sanitizers for fuzzing the reader
// (docs/reliability.md). Exit code 1 if any file is rejected.
#include "tpuc/Support/Npz.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  if (argc < 2) {
    llvm::errs() << "usage: tpuc-npz-check FILE.npz|FILE.npy...\n";
    return 2;
  }
  int rc = 0;
  for (int i = 1; i < argc; ++i) {
    auto npz = tpuc::readNpz(argv[i]);
    if (!npz) {
      llvm::errs() << "tpuc-npz-check: error: " << llvm::toString(npz.takeError()) << "\n";
      rc = 1;
      continue;
    }
    for (const auto &[name, arr] : *npz) {
      llvm::outs() << argv[i] << ": " << name << " " << arr.descr << " [";
      llvm::interleaveComma(arr.shape, llvm::outs());
      llvm::outs() << "]\n";
    }
  }
  return rc;
}
