//===- Json.cpp - Small JSON parser ---------------------------------------===//
#include "tpuc/Chip/Json.h"

#include <cstdio>
#include <cstdlib>

namespace tpuc {
namespace chip {

const JsonValue *JsonValue::get(const std::string &key) const {
  if (kind != Kind::Object)
    return nullptr;
  for (const auto &kv : object)
    if (kv.first == key)
      return &kv.second;
  return nullptr;
}

namespace {
class Parser {
public:
  explicit Parser(const std::string &s) : s_(s) {}

  Status parseDocument(JsonValue &out) {
    skipWs();
    TPUC_RETURN_IF_ERROR(parseValue(out, 0));
    skipWs();
    if (pos_ != s_.size())
      return fail("trailing characters after JSON value");
    return Status::OK();
  }

private:
  Status fail(const std::string &msg) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return Status::error("JSON parse error at line " + std::to_string(line) +
                         ", column " + std::to_string(col) + ": " + msg);
  }
  void skipWs() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' ||
                                s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  bool consume(const char *lit) {
    size_t n = 0;
    while (lit[n])
      ++n;
    if (s_.compare(pos_, n, lit) == 0) {
      pos_ += n;
      return true;
    }
    return false;
  }

  Status parseValue(JsonValue &v, int depth) {
    if (depth > 64)
      return fail("nesting too deep");
    if (pos_ >= s_.size())
      return fail("unexpected end of input");
    char c = s_[pos_];
    if (c == '{')
      return parseObject(v, depth);
    if (c == '[')
      return parseArray(v, depth);
    if (c == '"') {
      v.kind = JsonValue::Kind::String;
      return parseString(v.string);
    }
    if (consume("true")) {
      v.kind = JsonValue::Kind::Bool;
      v.boolean = true;
      return Status::OK();
    }
    if (consume("false")) {
      v.kind = JsonValue::Kind::Bool;
      v.boolean = false;
      return Status::OK();
    }
    if (consume("null")) {
      v.kind = JsonValue::Kind::Null;
      return Status::OK();
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return parseNumber(v);
    return fail(std::string("unexpected character '") + c + "'");
  }

  Status parseNumber(JsonValue &v) {
    size_t start = pos_;
    if (s_[pos_] == '-')
      ++pos_;
    auto digits = [&] {
      size_t b = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9')
        ++pos_;
      return pos_ > b;
    };
    if (!digits())
      return fail("malformed number");
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      if (!digits())
        return fail("malformed number");
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-'))
        ++pos_;
      if (!digits())
        return fail("malformed number");
    }
    std::string tok = s_.substr(start, pos_ - start);
    v.kind = JsonValue::Kind::Number;
    v.number = std::strtod(tok.c_str(), nullptr);
    return Status::OK();
  }

  static void appendUtf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xc0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += char(0xe0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3f));
      out += char(0x80 | (cp & 0x3f));
    } else {
      out += char(0xf0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3f));
      out += char(0x80 | ((cp >> 6) & 0x3f));
      out += char(0x80 | (cp & 0x3f));
    }
  }

  Status parseHex4(uint32_t &cp) {
    if (pos_ + 4 > s_.size())
      return fail("truncated \\u escape");
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      char h = s_[pos_++];
      cp <<= 4;
      if (h >= '0' && h <= '9')
        cp |= uint32_t(h - '0');
      else if (h >= 'a' && h <= 'f')
        cp |= uint32_t(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        cp |= uint32_t(h - 'A' + 10);
      else
        return fail("bad hex digit in \\u escape");
    }
    return Status::OK();
  }

  Status parseString(std::string &out) {
    ++pos_; // opening quote
    out.clear();
    while (true) {
      if (pos_ >= s_.size())
        return fail("unterminated string");
      char c = s_[pos_++];
      if (c == '"')
        return Status::OK();
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size())
        return fail("unterminated escape");
      char e = s_[pos_++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t cp = 0;
        TPUC_RETURN_IF_ERROR(parseHex4(cp));
        if (cp >= 0xd800 && cp < 0xdc00 && consume("\\u")) {
          uint32_t lo = 0;
          TPUC_RETURN_IF_ERROR(parseHex4(lo));
          if (lo >= 0xdc00 && lo < 0xe000)
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        return fail(std::string("bad escape '\\") + e + "'");
      }
    }
  }

  Status parseArray(JsonValue &v, int depth) {
    ++pos_;
    v.kind = JsonValue::Kind::Array;
    skipWs();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return Status::OK();
    }
    while (true) {
      skipWs();
      v.array.emplace_back();
      TPUC_RETURN_IF_ERROR(parseValue(v.array.back(), depth + 1));
      skipWs();
      if (pos_ >= s_.size())
        return fail("unterminated array");
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] == ']') {
        ++pos_;
        return Status::OK();
      }
      return fail("expected ',' or ']' in array");
    }
  }

  Status parseObject(JsonValue &v, int depth) {
    ++pos_;
    v.kind = JsonValue::Kind::Object;
    skipWs();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return Status::OK();
    }
    while (true) {
      skipWs();
      if (pos_ >= s_.size() || s_[pos_] != '"')
        return fail("expected string key in object");
      std::string key;
      TPUC_RETURN_IF_ERROR(parseString(key));
      if (v.get(key))
        return fail("duplicate key \"" + key + "\"");
      skipWs();
      if (pos_ >= s_.size() || s_[pos_] != ':')
        return fail("expected ':' after key");
      ++pos_;
      skipWs();
      v.object.emplace_back(key, JsonValue());
      TPUC_RETURN_IF_ERROR(parseValue(v.object.back().second, depth + 1));
      skipWs();
      if (pos_ >= s_.size())
        return fail("unterminated object");
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] == '}') {
        ++pos_;
        return Status::OK();
      }
      return fail("expected ',' or '}' in object");
    }
  }

  const std::string &s_;
  size_t pos_ = 0;
};
} // namespace

Status parseJson(const std::string &text, JsonValue &out) {
  out = JsonValue();
  return Parser(text).parseDocument(out);
}

std::string jsonQuote(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", c);
        out += buf;
      } else {
        out += char(c);
      }
    }
  }
  out += "\"";
  return out;
}

} // namespace chip
} // namespace tpuc
