// Shared by the fuzz targets (tests/fuzz/*_fuzz.cpp) and the corpus replay driver (replay_main.cpp).
// A target catches the errors its reader documents for bad input and records whether the input was accepted
// or refused; anything else (a crash, a sanitizer report, another exception, a broken invariant) is a
// finding, reported through finding(), which aborts so that libFuzzer saves the input.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace dtsim::fuzz {

enum class Outcome { None, Accepted, Refused };

// What the last call of LLVMFuzzerTestOneInput made of its input; the replay driver checks it against the
// seed's name (ok-* must be accepted, bad-* refused).
inline Outcome& last_outcome() {
  static Outcome outcome = Outcome::None;
  return outcome;
}

[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "dtsim fuzz finding: %s\n", what.c_str());
  std::abort();
}

// An error message meant for a terminal must not hold a control character or a byte that is not UTF-8
// (`unprintable_at` is sim::find_unprintable; passed in so that this header needs no library).
template <class FindUnprintable>
void check_message(std::string_view message, FindUnprintable unprintable_at) {
  if (unprintable_at(message) != std::string_view::npos)
    finding("an error message holds a raw control character or a byte that is not UTF-8: " +
            std::string(message.substr(0, 200)));
}

}  // namespace dtsim::fuzz
