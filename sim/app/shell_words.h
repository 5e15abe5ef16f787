// Shell words: a pasted shell command line split into words as bash would, and a word quoted back
// for display. Used for simulate's pasted vLLM lines and the vLLM commands servesim prints.
//
// Contract: split_shell_words() never runs a shell; it refuses (ConfigError naming `flag`) what
// it cannot reproduce without one. shell_quote(split) round-trips: bash reads the quoted word back
// as the word.
#ifndef SERVESIM_SIM_APP_SHELL_WORDS_H_
#define SERVESIM_SIM_APP_SHELL_WORDS_H_

#include <string>
#include <vector>

namespace servesim::app {

// Splits a pasted shell command line into words as bash would: whitespace, '…' and "…" quotes,
// $'…' (ANSI-C quotes), backslash escapes and backslash-newline continuations, # comments.
// Refuses (ConfigError naming `flag`) what it cannot reproduce without a shell: $VARIABLES,
// `commands`, and ; | & < > (more than one command, redirections, placeholders such as <path>).
std::vector<std::string> split_shell_words(const std::string& line, const std::string& flag);

// A word as a shell reads it back: unchanged when it has no special character, else in '…'.
std::string shell_quote(const std::string& word);

}  // namespace servesim::app

#endif  // SERVESIM_SIM_APP_SHELL_WORDS_H_
