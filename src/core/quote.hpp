// SPDX-License-Identifier: LGPL-2.1-or-later
// src/core/quote.hpp — how readers quote input text in error messages.
//
// Contract: quote_input(s) returns the first 40 bytes of s with every byte outside printable
// ASCII (0x20..0x7e) written as \xHH (two lower-case hex digits), followed by "..." when s
// is longer; the caller adds the quotes. Header-only, no library state.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace stardiff::detail {

inline std::string quote_input(std::string_view s) {
  constexpr std::size_t kMax = 40;
  static const char hex[] = "0123456789abcdef";
  std::string out;
  for (char ch : s.substr(0, kMax)) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (s.size() > kMax) out += "...";
  return out;
}

}  // namespace stardiff::detail
