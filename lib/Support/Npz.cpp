#include "tpuc/Support/Npz.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CRC.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <cstring>
#include <limits>
#include <zlib.h>

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

/// True when [offset, offset + len) lies inside a buffer of `size` bytes,
/// computed without overflow for any 64-bit offset and length.
bool fits(uint64_t offset, uint64_t len, uint64_t size) {
  return offset <= size && len <= size - offset;
}

/// Element sizes of the little-endian dtypes the toolchain reads and writes;
/// 0 for anything else (big-endian, strings, objects, ...).
size_t elementSize(StringRef descr) {
  return StringSwitch<size_t>(descr)
      .Cases({"|b1", "|i1", "|u1"}, 1)
      .Cases({"<i2", "<u2", "<f2"}, 2)
      .Cases({"<i4", "<u4", "<f4"}, 4)
      .Cases({"<i8", "<u8", "<f8"}, 8)
      .Default(0);
}

// Parses the python-dict header of a .npy entry.
Error parseNpy(StringRef path, StringRef entry, StringRef bytes, NpyArray &out) {
  auto bad = [&](const Twine &why) {
    return fail(path, "array '" + entry + "': " + why);
  };
  if (bytes.size() < 10 || !bytes.starts_with("\x93NUMPY"))
    return bad("not a .npy entry (bad magic)");
  unsigned major = uint8_t(bytes[6]);
  uint64_t hlen, hstart;
  if (major == 1) {
    hlen = rd16(bytes.data() + 8);
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return bad("truncated header");
    hlen = rd32(bytes.data() + 8);
    hstart = 12;
  } else {
    return bad("unsupported .npy format version " + Twine(major));
  }
  if (!fits(hstart, hlen, bytes.size()))
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
  size_t esize = elementSize(out.descr);
  if (esize == 0)
    return bad("unsupported dtype '" + out.descr + "'");
  out.shape.clear();
  SmallVector<StringRef> dims;
  shape.split(dims, ',', -1, /*KeepEmpty=*/false);
  uint64_t nbytes = esize;
  for (StringRef d : dims) {
    d = d.trim();
    if (d.empty())
      continue;
    int64_t v;
    if (d.getAsInteger(10, v) || v < 0)
      return bad("bad dimension '" + d + "'");
    // Checked so that a huge shape cannot wrap into a small byte count.
    if (v != 0 && nbytes > std::numeric_limits<int64_t>::max() / uint64_t(v))
      return bad("shape is too large (over 2^63 bytes)");
    nbytes *= uint64_t(v);
    out.shape.push_back(v);
  }
  StringRef payload = bytes.drop_front(hstart + hlen);
  if (payload.size() < nbytes)
    return bad("data truncated: " + Twine(payload.size()) + " of " +
               Twine(nbytes) + " bytes");
  out.data.assign(payload.begin(), payload.begin() + nbytes);
  return Error::success();
}

/// Inflates a raw deflate stream of exactly `usize` bytes.
Error inflateEntry(StringRef path, StringRef name, StringRef in, uint64_t usize,
                   std::string &out) {
  auto bad = [&](const Twine &why) {
    return fail(path, "entry '" + name + "': " + why);
  };
  // Deflate cannot expand more than ~1032:1, so a larger claim is corrupt and
  // must not drive the allocation.
  if (usize / 1032 > in.size() + 1)
    return bad("declared size " + Twine(usize) +
               " is impossible for its compressed size " + Twine(in.size()));
  out.assign(size_t(usize), '\0');
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK)
    return bad("cannot initialise zlib");
  z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in.data()));
  z.avail_in = uInt(std::min<uint64_t>(in.size(), UINT32_MAX));
  z.next_out = reinterpret_cast<Bytef *>(out.data());
  z.avail_out = uInt(std::min<uint64_t>(usize, UINT32_MAX));
  int rc;
  // Feed in <4 GiB chunks: zlib's counters are 32-bit.
  while (true) {
    rc = inflate(&z, Z_FINISH);
    if (rc == Z_STREAM_END || (rc != Z_OK && rc != Z_BUF_ERROR))
      break;
    uint64_t consumed = uint64_t(reinterpret_cast<const char *>(z.next_in) - in.data());
    uint64_t produced = uint64_t(reinterpret_cast<char *>(z.next_out) - out.data());
    if (z.avail_in == 0 && consumed < in.size())
      z.avail_in = uInt(std::min<uint64_t>(in.size() - consumed, UINT32_MAX));
    else if (z.avail_out == 0 && produced < usize)
      z.avail_out = uInt(std::min<uint64_t>(usize - produced, UINT32_MAX));
    else
      break; // no progress possible: input exhausted or output full
  }
  uint64_t produced = uint64_t(reinterpret_cast<char *>(z.next_out) - out.data());
  std::string msg = z.msg ? z.msg : "";
  inflateEnd(&z);
  if (rc != Z_STREAM_END)
    return bad(msg.empty() ? Twine("corrupt or truncated deflate data")
                           : Twine("corrupt deflate data (") + msg + ")");
  if (produced != usize)
    return bad("inflates to " + Twine(produced) + " bytes, the directory says " +
               Twine(usize));
  return Error::success();
}

Expected<NpzFile> parseZip(StringRef path, StringRef b) {
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
    if (!fits(z, 56, b.size()) || rd32(b.data() + z) != 0x06064b50)
      return fail(path, "corrupt zip64 directory");
    count = rd64(b.data() + z + 32);
    cdOffset = rd64(b.data() + z + 48);
  }
  // Each directory record takes at least 46 bytes.
  if (!fits(cdOffset, 0, b.size()) || count > (b.size() - cdOffset) / 46)
    return fail(path, "corrupt zip directory (" + Twine(count) +
                          " entries cannot fit in the file)");
  NpzFile out;
  uint64_t p = cdOffset;
  for (uint64_t e = 0; e < count; ++e) {
    if (!fits(p, 46, b.size()) || rd32(b.data() + p) != 0x02014b50)
      return fail(path, "corrupt zip directory entry " + Twine(e));
    const char *c = b.data() + p;
    uint16_t flags = rd16(c + 8), method = rd16(c + 10);
    uint32_t crc = rd32(c + 16);
    uint64_t csize = rd32(c + 20), usize = rd32(c + 24);
    uint16_t nlen = rd16(c + 28), xlen = rd16(c + 30), clen = rd16(c + 32);
    uint64_t local = rd32(c + 42);
    if (!fits(p + 46, uint64_t(nlen) + xlen + clen, b.size()))
      return fail(path, "corrupt zip directory entry " + Twine(e));
    StringRef name(c + 46, nlen);
    // Zip64 extra field: only the fields saturated in the header are present.
    for (const char *x = c + 46 + nlen, *xe = x + xlen; xe - x >= 4;) {
      uint16_t id = rd16(x), sz = rd16(x + 2);
      const char *f = x + 4;
      if (sz > xe - f)
        return fail(path, "corrupt extra field of '" + name + "'");
      if (id == 0x0001) {
        const char *fe = f + sz;
        if (usize == 0xffffffff && fe - f >= 8) usize = rd64(f), f += 8;
        if (csize == 0xffffffff && fe - f >= 8) csize = rd64(f), f += 8;
        if (local == 0xffffffff && fe - f >= 8) local = rd64(f), f += 8;
      }
      x += 4 + sz;
    }
    p += 46 + uint64_t(nlen) + xlen + clen;
    if (flags & 1)
      return fail(path, "entry '" + name + "' is encrypted");
    if (method != 0 && method != 8)
      return fail(path, "entry '" + name + "' uses zip compression method " +
                            Twine(method) + " (only stored and deflate are read)");
    if (!fits(local, 30, b.size()) || rd32(b.data() + local) != 0x04034b50)
      return fail(path, "corrupt local header of '" + name + "'");
    uint64_t data = local + 30 + rd16(b.data() + local + 26) +
                    rd16(b.data() + local + 28);
    if (!fits(data, csize, b.size()))
      return fail(path, "entry '" + name + "' runs past the end of the file");
    StringRef raw = b.substr(data, csize);
    std::string inflated;
    if (method == 8) {
      if (Error err = inflateEntry(path, name, raw, usize, inflated))
        return std::move(err);
      raw = inflated;
    } else if (usize != csize) {
      return fail(path, "entry '" + name + "' is stored but its sizes differ");
    }
    if (uint32_t(::crc32_z(0, reinterpret_cast<const Bytef *>(raw.data()),
                           raw.size())) != crc)
      return fail(path, "entry '" + name + "' fails its CRC-32 check (corrupt file)");
    StringRef key = name;
    key.consume_back(".npy");
    if (out.count(key.str()))
      return fail(path, "duplicate array '" + key + "'");
    NpyArray arr;
    if (Error err = parseNpy(path, key, raw, arr))
      return std::move(err);
    out[key.str()] = std::move(arr);
  }
  return out;
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
  // A bare .npy holds one unnamed array; numpy names such arrays arr_0.
  if (b.starts_with("\x93NUMPY")) {
    NpzFile out;
    if (Error err = parseNpy(path, "arr_0", b, out["arr_0"]))
      return std::move(err);
    return out;
  }
  return parseZip(path, b);
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
