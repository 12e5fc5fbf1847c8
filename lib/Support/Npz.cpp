#include "tpuc/Support/Npz.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CRC.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include <cstring>

using namespace llvm;

namespace tpuc {
namespace {

Error fail(StringRef path, const Twine &why) {
  return createStringError(inconvertibleErrorCode(), path + ": " + why);
}

uint16_t rd16(const char *p) {
  return uint8_t(p[0]) | uint16_t(uint8_t(p[1])) << 8;
}
uint32_t rd32(const char *p) { return rd16(p) | uint32_t(rd16(p + 2)) << 16; }
uint64_t rd64(const char *p) { return rd32(p) | uint64_t(rd32(p + 4)) << 32; }

size_t elementSize(StringRef descr) {
  if (descr.size() < 3)
    return 0;
  unsigned n = 0;
  if (descr.drop_front(2).getAsInteger(10, n))
    return 0;
  return n;
}

// Parses the python-dict header of a .npy entry.
Error parseNpy(StringRef path, StringRef entry, StringRef bytes, NpyArray &out) {
  auto bad = [&](const Twine &why) {
    return fail(path, "array '" + entry + "': " + why);
  };
  if (bytes.size() < 10 || !bytes.starts_with("\x93NUMPY"))
    return bad("not a .npy entry (bad magic)");
  unsigned major = uint8_t(bytes[6]);
  size_t hlen, hstart;
  if (major == 1) {
    hlen = rd16(bytes.data() + 8);
    hstart = 10;
  } else {
    if (bytes.size() < 12)
      return bad("truncated header");
    hlen = rd32(bytes.data() + 8);
    hstart = 12;
  }
  if (hstart + hlen > bytes.size())
    return bad("truncated header");
  StringRef header = bytes.substr(hstart, hlen);
  auto field = [&](StringRef key) -> StringRef {
    size_t k = header.find(("'" + key + "'").str());
    if (k == StringRef::npos)
      return {};
    StringRef rest = header.drop_front(k + key.size() + 2).ltrim(" :");
    return rest;
  };
  StringRef descr = field("descr");
  if (!descr.consume_front("'"))
    return bad("header has no 'descr'");
  out.descr = descr.take_until([](char c) { return c == '\''; }).str();
  if (field("fortran_order").starts_with("True"))
    return bad("Fortran-ordered arrays are not supported");
  StringRef shape = field("shape");
  if (!shape.consume_front("("))
    return bad("header has no 'shape'");
  shape = shape.take_until([](char c) { return c == ')'; });
  out.shape.clear();
  SmallVector<StringRef> dims;
  shape.split(dims, ',', -1, /*KeepEmpty=*/false);
  for (StringRef d : dims) {
    d = d.trim();
    if (d.empty())
      continue;
    int64_t v;
    if (d.getAsInteger(10, v) || v < 0)
      return bad("bad dimension '" + d + "'");
    out.shape.push_back(v);
  }
  size_t esize = elementSize(out.descr);
  if (esize == 0)
    return bad("unsupported dtype '" + out.descr + "'");
  size_t nbytes = size_t(out.numElements()) * esize;
  StringRef payload = bytes.drop_front(hstart + hlen);
  if (payload.size() < nbytes)
    return bad("data truncated: " + Twine(payload.size()) + " of " +
               Twine(nbytes) + " bytes");
  out.data.assign(payload.begin(), payload.begin() + nbytes);
  return Error::success();
}

void put16(std::string &s, uint16_t v) {
  s.push_back(char(v));
  s.push_back(char(v >> 8));
}
void put32(std::string &s, uint32_t v) {
  put16(s, uint16_t(v));
  put16(s, uint16_t(v >> 16));
}

std::string npyBytes(const NpyArray &a) {
  std::string header = "{'descr': '" + a.descr +
                       "', 'fortran_order': False, 'shape': (";
  for (int64_t d : a.shape)
    header += std::to_string(d) + ", ";
  if (a.shape.size() > 1)
    header.resize(header.size() - 1);
  else if (a.shape.size() == 1)
    header.pop_back();
  header += "), }";
  // Pad so the data starts 64-byte aligned, as numpy does.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  put16(out, uint16_t(header.size()));
  out += header;
  out.append(a.data.begin(), a.data.end());
  return out;
}

} // namespace

int64_t NpyArray::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Expected<std::vector<float>> NpyArray::toFloat() const {
  int64_t n = numElements();
  std::vector<float> out(n);
  const char *p = data.data();
  auto each = [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, p + i * sizeof(T), sizeof(T));
      out[i] = float(v);
    }
  };
  if (descr == "<f4")
    each(float());
  else if (descr == "<f8")
    each(double());
  else if (descr == "<i8")
    each(int64_t());
  else if (descr == "<i4")
    each(int32_t());
  else if (descr == "<i2")
    each(int16_t());
  else if (descr == "|i1")
    each(int8_t());
  else if (descr == "|u1" || descr == "|b1")
    each(uint8_t());
  else if (descr == "<u2")
    each(uint16_t());
  else if (descr == "<f2") {
    for (int64_t i = 0; i < n; ++i) {
      uint16_t h = rd16(p + 2 * i);
      uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f,
               man = h & 0x3ff, bits;
      if (exp == 0x1f)
        bits = sign | 0x7f800000 | (man << 13);
      else if (exp != 0)
        bits = sign | ((exp + 112) << 23) | (man << 13);
      else if (man == 0)
        bits = sign;
      else { // subnormal half: renormalize
        int e = -1;
        do {
          ++e;
          man <<= 1;
        } while (!(man & 0x400));
        bits = sign | ((112 - e) << 23) | ((man & 0x3ff) << 13);
      }
      std::memcpy(&out[i], &bits, 4);
    }
  } else
    return createStringError(inconvertibleErrorCode(),
                             "cannot convert dtype '" + descr + "' to float32");
  return out;
}

NpyArray NpyArray::fromFloat(ArrayRef<float> values, ArrayRef<int64_t> shape) {
  NpyArray a;
  a.descr = "<f4";
  a.shape.assign(shape.begin(), shape.end());
  a.data.resize(values.size() * sizeof(float));
  std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

Expected<NpzFile> readNpz(StringRef path) {
  auto buf = MemoryBuffer::getFile(path, /*IsText=*/false,
                                   /*RequiresNullTerminator=*/false);
  if (!buf)
    return fail(path, "cannot open: " + buf.getError().message());
  StringRef b = (*buf)->getBuffer();
  // End of central directory: scan back over a possible archive comment.
  if (b.size() < 22)
    return fail(path, "not an npz archive (too short)");
  size_t eocd = StringRef::npos;
  for (size_t i = b.size() - 22 + 1; i-- > 0 && b.size() - i < 22 + 65536;)
    if (rd32(b.data() + i) == 0x06054b50) {
      eocd = i;
      break;
    }
  if (eocd == StringRef::npos)
    return fail(path, "not an npz archive (no zip directory)");
  uint64_t count = rd16(b.data() + eocd + 10);
  uint64_t cdOffset = rd32(b.data() + eocd + 16);
  if (count == 0xffff || cdOffset == 0xffffffff) {
    if (eocd < 20 || rd32(b.data() + eocd - 20) != 0x07064b50)
      return fail(path, "corrupt zip64 directory locator");
    uint64_t z = rd64(b.data() + eocd - 20 + 8);
    if (z + 56 > b.size() || rd32(b.data() + z) != 0x06064b50)
      return fail(path, "corrupt zip64 directory");
    count = rd64(b.data() + z + 32);
    cdOffset = rd64(b.data() + z + 48);
  }
  NpzFile out;
  uint64_t p = cdOffset;
  for (uint64_t e = 0; e < count; ++e) {
    if (p + 46 > b.size() || rd32(b.data() + p) != 0x02014b50)
      return fail(path, "corrupt zip directory entry " + Twine(e));
    const char *c = b.data() + p;
    uint16_t method = rd16(c + 10);
    uint64_t csize = rd32(c + 20), usize = rd32(c + 24);
    uint16_t nlen = rd16(c + 28), xlen = rd16(c + 30), clen = rd16(c + 32);
    uint64_t local = rd32(c + 42);
    if (p + 46 + nlen + xlen > b.size())
      return fail(path, "corrupt zip directory entry " + Twine(e));
    StringRef name(c + 46, nlen);
    // Zip64 extra field: only the fields saturated in the header are present.
    for (const char *x = c + 46 + nlen, *xe = x + xlen; x + 4 <= xe;) {
      uint16_t id = rd16(x), sz = rd16(x + 2);
      const char *f = x + 4;
      if (id == 0x0001) {
        if (usize == 0xffffffff && f + 8 <= xe) usize = rd64(f), f += 8;
        if (csize == 0xffffffff && f + 8 <= xe) csize = rd64(f), f += 8;
        if (local == 0xffffffff && f + 8 <= xe) local = rd64(f), f += 8;
      }
      x += 4 + sz;
    }
    p += 46 + nlen + xlen + clen;
    if (method != 0)
      return fail(path, "entry '" + name +
                            "' is compressed; save with numpy.savez, not "
                            "savez_compressed");
    if (local + 30 > b.size() || rd32(b.data() + local) != 0x04034b50)
      return fail(path, "corrupt local header of '" + name + "'");
    uint64_t data = local + 30 + rd16(b.data() + local + 26) +
                    rd16(b.data() + local + 28);
    if (data + csize > b.size())
      return fail(path, "entry '" + name + "' runs past the end of the file");
    StringRef key = name;
    key.consume_back(".npy");
    NpyArray arr;
    if (Error err = parseNpy(path, key, b.substr(data, csize), arr))
      return std::move(err);
    out[key.str()] = std::move(arr);
  }
  return out;
}

Error writeNpz(StringRef path, const NpzFile &arrays) {
  std::error_code ec;
  raw_fd_ostream os(path, ec, sys::fs::OF_None);
  if (ec)
    return fail(path, "cannot write: " + ec.message());
  std::string central;
  uint64_t offset = 0;
  for (const auto &[key, arr] : arrays) {
    std::string name = key + ".npy";
    std::string body = npyBytes(arr);
    if (body.size() >= 0xffffffffull || offset >= 0xffffffffull)
      return fail(path, "archives over 4 GiB are not supported");
    uint32_t crc = crc32(arrayRefFromStringRef(body));
    std::string local;
    put32(local, 0x04034b50);
    put16(local, 20);          // version needed
    put16(local, 0);           // flags
    put16(local, 0);           // stored
    put16(local, 0);           // time
    put16(local, 0x21);        // date 1980-01-01
    put32(local, crc);
    put32(local, uint32_t(body.size()));
    put32(local, uint32_t(body.size()));
    put16(local, uint16_t(name.size()));
    put16(local, 0);
    local += name;
    put32(central, 0x02014b50);
    put16(central, 20);
    put16(central, 20);
    put16(central, 0);
    put16(central, 0);
    put16(central, 0);
    put16(central, 0x21);
    put32(central, crc);
    put32(central, uint32_t(body.size()));
    put32(central, uint32_t(body.size()));
    put16(central, uint16_t(name.size()));
    put16(central, 0); // extra
    put16(central, 0); // comment
    put16(central, 0); // disk
    put16(central, 0); // internal attrs
    put32(central, 0); // external attrs
    put32(central, uint32_t(offset));
    central += name;
    os << local << body;
    offset += local.size() + body.size();
  }
  std::string end;
  put32(end, 0x06054b50);
  put16(end, 0);
  put16(end, 0);
  put16(end, uint16_t(arrays.size()));
  put16(end, uint16_t(arrays.size()));
  put32(end, uint32_t(central.size()));
  put32(end, uint32_t(offset));
  put16(end, 0);
  os << central << end;
  os.close();
  if (os.has_error())
    return fail(path, "write failed: " + os.error().message());
  return Error::success();
}

} // namespace tpuc
