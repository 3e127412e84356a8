// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/common/json.hpp — a minimal JSON object writer for the drivers' --json output.
//
// Contract: JsonWriter builds exactly one JSON object; numbers are printed with %.17g
// (non-finite numbers become null), strings are escaped, nesting via begin/end.
#pragma once
#include <cmath>
#include <cstdio>
#include <string>

namespace stardiff::apps {

class JsonWriter {
 public:
  JsonWriter() { out_ = "{"; }
  JsonWriter& key(const std::string& k) {
    comma();
    out_ += quote(k) + ":";
    fresh_ = true;
    return *this;
  }
  JsonWriter& value(double v) {
    comma();
    if (!std::isfinite(v)) {
      out_ += "null";
    } else {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", v);
      out_ += buf;
    }
    return *this;
  }
  JsonWriter& value(long long v) {
    comma();
    out_ += std::to_string(v);
    return *this;
  }
  JsonWriter& value(int v) { return value(static_cast<long long>(v)); }
  JsonWriter& value(long v) { return value(static_cast<long long>(v)); }
  JsonWriter& value(unsigned long v) { return value(static_cast<long long>(v)); }
  JsonWriter& value(bool v) {
    comma();
    out_ += v ? "true" : "false";
    return *this;
  }
  JsonWriter& value(const std::string& v) {
    comma();
    out_ += quote(v);
    return *this;
  }
  JsonWriter& value(const char* v) { return value(std::string(v)); }
  template <class T> JsonWriter& field(const std::string& k, const T& v) { return key(k).value(v); }
  JsonWriter& begin_object() { return open('{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array() { return open('['); }
  JsonWriter& end_array() { return close(']'); }
  std::string str() const { return out_ + "}"; }

  static std::string quote(const std::string& s) {
    std::string r = "\"";
    for (char c : s) {
      switch (c) {
        case '"': r += "\\\""; break;
        case '\\': r += "\\\\"; break;
        case '\n': r += "\\n"; break;
        case '\t': r += "\\t"; break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            r += buf;
          } else {
            r += c;
          }
      }
    }
    return r + "\"";
  }

 private:
  void comma() {
    if (!fresh_ && out_.back() != '{' && out_.back() != '[') out_ += ",";
    fresh_ = false;
  }
  JsonWriter& open(char c) {
    comma();
    out_ += c;
    fresh_ = true;
    return *this;
  }
  JsonWriter& close(char c) {
    out_ += c;
    fresh_ = false;
    return *this;
  }
  std::string out_;
  bool fresh_ = true;
};

}  // namespace stardiff::apps
