// One pass over the text of an INI file: its `key = value` entries with their line numbers.
#pragma once

#include <string>
#include <vector>

namespace tileops {

struct IniEntry {
  std::string section;  // "" before the first [section] header
  std::string key;
  std::string value;  // trimmed; one pair of matching surrounding quotes (" or ') removed
  int line = 0;       // 1-based
};

struct IniProblem {
  int line = 0;
  std::string key;     // the key concerned, or empty
  std::string reason;  // e.g. "given more than once (first on line 2)"
};

struct IniText {
  std::vector<IniEntry> entries;  // in file order
  std::vector<IniProblem> problems;  // in file order; entries stop at the first one
};

// Reads `text`: blank lines and lines starting with '#' or ';' are skipped, and a '#' after a
// value starts a comment too (so values cannot hold '#'); `[name]` opens section `name`; every
// other line must be `key = value` with a non-empty key. A key repeated within its section is a
// problem naming its second line and its first; so are a malformed line and an unclosed '['.
// Reading stops at the first problem.
IniText read_ini_text(const std::string& text);

}  // namespace tileops
