#include "sim/app/shell_words.h"

#include <cctype>
#include <cstdlib>

#include "sim/base/error.h"

namespace servesim::app {

std::string shell_quote(const std::string& word) {
  static const std::string kPlain =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=,+@%";
  if (!word.empty() && word.find_first_not_of(kPlain) == std::string::npos) return word;
  std::string q = "'";
  for (char c : word) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

std::vector<std::string> split_shell_words(const std::string& line, const std::string& flag) {
  auto fail = [&](const std::string& why) {
    return ConfigError(flag + ": the pasted command line has " + why);
  };
  // Whether the $ at `at` starts an expansion (bash: a name, ${…}, $(…), a positional or special
  // parameter); any other $ is a literal character.
  auto expands = [&](size_t at) {
    if (at + 1 >= line.size()) return false;
    const char d = line[at + 1];
    return std::isalnum(static_cast<unsigned char>(d)) || d == '_' || d == '{' || d == '(' ||
           d == '?' || d == '#' || d == '@' || d == '*' || d == '!' || d == '$' || d == '-';
  };
  // "$MODEL" for a $ at `at`: the variable's name, for the message.
  auto expansion = [&](size_t at) {
    const std::string tail = ", which servesim cannot expand: paste the line with its values";
    if (line[at] == '`') return "the command substitution `…`" + tail;
    if (at + 1 < line.size() && line[at + 1] == '(') return "the command substitution $(…)" + tail;
    size_t end = at + 1;
    if (end < line.size() && line[end] == '{') ++end;
    while (end < line.size() &&
           (std::isalnum(static_cast<unsigned char>(line[end])) || line[end] == '_')) {
      ++end;
    }
    if (end < line.size() && line[end] == '}' && line[at + 1] == '{') ++end;
    return "the shell expansion " + line.substr(at, std::max<size_t>(end - at, 2)) + tail;
  };
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;  // a word has started (it may be empty: '' or "")
  auto end_word = [&] {
    if (in_word) words.push_back(word);
    word.clear();
    in_word = false;
  };
  const size_t n = line.size();
  size_t i = 0;
  while (i < n) {
    const char c = line[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      end_word();
      ++i;
    } else if (c == '\\') {
      if (i + 1 < n && line[i + 1] == '\n') {
        i += 2;  // line continuation
      } else if (i + 2 < n && line[i + 1] == '\r' && line[i + 2] == '\n') {
        i += 3;
      } else if (i + 1 < n) {
        word += line[i + 1];
        in_word = true;
        i += 2;
      } else {
        ++i;  // a trailing backslash continues onto nothing
      }
    } else if (c == '\'') {
      const size_t close = line.find('\'', i + 1);
      if (close == std::string::npos) throw fail("an unterminated ' quote");
      word += line.substr(i + 1, close - i - 1);
      in_word = true;
      i = close + 1;
    } else if (c == '"') {
      in_word = true;
      ++i;
      bool closed = false;
      while (i < n) {
        const char d = line[i];
        if (d == '"') {
          closed = true;
          ++i;
          break;
        }
        if (d == '\\' && i + 1 < n) {
          const char e = line[i + 1];
          if (e == '\n') {
            i += 2;
            continue;
          }
          if (e == '"' || e == '\\' || e == '$' || e == '`') {
            word += e;
            i += 2;
            continue;
          }
        }
        if ((d == '$' && expands(i)) || d == '`') throw fail(expansion(i));
        word += d;
        ++i;
      }
      if (!closed) throw fail("an unterminated \" quote");
    } else if (c == '$' && i + 1 < n && line[i + 1] == '\'') {
      // ANSI-C quoting, as vLLM's docs use for --speculative-config $'{...}'.
      in_word = true;
      i += 2;
      bool closed = false;
      while (i < n) {
        const char d = line[i];
        if (d == '\'') {
          closed = true;
          ++i;
          break;
        }
        if (d == '\\' && i + 1 < n) {
          const char e = line[i + 1];
          switch (e) {
            case 'n':
              word += '\n';
              break;
            case 't':
              word += '\t';
              break;
            case 'r':
              word += '\r';
              break;
            case '\\':
              word += '\\';
              break;
            case '\'':
              word += '\'';
              break;
            case '"':
              word += '"';
              break;
            default:
              word += '\\';
              word += e;
              break;
          }
          i += 2;
          continue;
        }
        word += d;
        ++i;
      }
      if (!closed) throw fail("an unterminated $' quote");
    } else if ((c == '$' && expands(i)) || c == '`') {
      throw fail(expansion(i));
    } else if (c == '#' && !in_word) {
      while (i < n && line[i] != '\n') ++i;  // a comment, to the end of the line
    } else if (c == ';' || c == '|' || c == '&' || c == '<' || c == '>' || c == '(' || c == ')') {
      throw fail(std::string("'") + c +
                 "': one command is expected, without pipes or redirections (replace a "
                 "placeholder such as <your data path> by its value)");
    } else if (c == '*' || c == '?') {
      throw fail(std::string("an unquoted '") + c + "', a glob servesim cannot expand");
    } else if (c == '~' && !in_word) {
      // Tilde expansion of ~/… at the start of a word (or after --flag=), as bash does.
      const char* home = std::getenv("HOME");
      const bool slash_or_end = i + 1 >= n || line[i + 1] == '/' || line[i + 1] == ' ' ||
                                line[i + 1] == '\n' || line[i + 1] == '\t';
      if (!slash_or_end || home == nullptr) {
        throw fail("a ~ path that servesim cannot expand (~user, or no $HOME)");
      }
      word += home;
      in_word = true;
      ++i;
    } else {
      word += c;
      in_word = true;
      ++i;
    }
  }
  end_word();
  return words;
}

}  // namespace servesim::app
