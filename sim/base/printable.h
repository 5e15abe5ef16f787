// Text from a file or the command line made safe to print in a one-line error message.
//
// Why: an error that quotes a file's content (a CSV header, a cell, a JSON token) would otherwise
// copy whatever bytes the file holds to the terminal: escape sequences that clear or recolour it,
// a NUL that cuts the message short (what() is a C string), a carriage return that overwrites the
// line, or a whole binary "line" of megabytes.
//
// printable(): valid UTF-8 text without control characters is returned unchanged (file names in
// any script stay readable). Every other byte is written as an escape: \t \r \n for those three,
// \xNN for the other C0 controls, DEL, C1 controls (U+0080-U+009F), the invisible byte-order mark
// U+FEFF and any byte that is not part of a valid UTF-8 sequence.
// excerpt(): printable() of at most `max_bytes` bytes of the text (cut on a UTF-8 boundary), with
// "... (N bytes)" appended when it was cut.
#ifndef SERVESIM_SIM_BASE_PRINTABLE_H_
#define SERVESIM_SIM_BASE_PRINTABLE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace servesim {

namespace detail {

// Length of the valid UTF-8 sequence at s[i] (1-4), or 0 when the bytes there are not one
// (overlong forms, surrogates and code points above U+10FFFF included).
inline size_t utf8_sequence_length(std::string_view s, size_t i, uint32_t& code_point) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = byte(i);
  size_t n = 0;
  if (b < 0x80) {
    code_point = b;
    return 1;
  }
  if (b >= 0xC2 && b <= 0xDF) {
    n = 2;
    code_point = b & 0x1Fu;
  } else if (b >= 0xE0 && b <= 0xEF) {
    n = 3;
    code_point = b & 0x0Fu;
  } else if (b >= 0xF0 && b <= 0xF4) {
    n = 4;
    code_point = b & 0x07u;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0u) != 0x80u) return 0;
    code_point = (code_point << 6) | (byte(i + k) & 0x3Fu);
  }
  const uint32_t min = n == 2 ? 0x80u : n == 3 ? 0x800u : 0x10000u;
  if (code_point < min || code_point > 0x10FFFFu ||
      (code_point >= 0xD800u && code_point <= 0xDFFFu)) {
    return 0;
  }
  return n;
}

inline void append_hex_escape(std::string& out, unsigned char b) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[b >> 4];
  out += kHex[b & 0xF];
}

}  // namespace detail

inline std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    const size_t n = detail::utf8_sequence_length(text, i, cp);
    const bool control = cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || cp == 0xFEFF;
    if (n > 0 && !control) {
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    const size_t bytes = n > 0 ? n : 1;  // an invalid byte is escaped alone
    for (size_t k = 0; k < bytes; ++k) {
      const char c = text[i + k];
      if (c == '\t') {
        out += "\\t";
      } else if (c == '\r') {
        out += "\\r";
      } else if (c == '\n') {
        out += "\\n";
      } else {
        detail::append_hex_escape(out, static_cast<unsigned char>(c));
      }
    }
    i += bytes;
  }
  return out;
}

inline std::string excerpt(std::string_view text, size_t max_bytes = 80) {
  if (text.size() <= max_bytes) return printable(text);
  size_t cut = max_bytes;
  // Back up over UTF-8 continuation bytes so a multi-byte character is not split.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0u) == 0x80u) --cut;
  if (cut == 0) cut = max_bytes;
  return printable(text.substr(0, cut)) + "... (" + std::to_string(text.size()) + " bytes)";
}

}  // namespace servesim

#endif  // SERVESIM_SIM_BASE_PRINTABLE_H_
