// Runs a fuzz target's entry function once over every file of its seed corpus, without libFuzzer, so that
// the default test suite checks the committed inputs cheaply (the CTest tests fuzz_corpus.<target>).
// A seed named ok-* must be accepted and one named bad-* refused; any seed must not crash.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "tests/fuzz/fuzz_support.hpp"

namespace fs = std::filesystem;
using dtsim::fuzz::Outcome;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(argv[1], ec))
    if (entry.is_regular_file()) files.push_back(entry.path());
  if (ec || files.empty()) {
    std::fprintf(stderr, "no seed inputs in %s\n", argv[1]);
    return 1;
  }
  std::sort(files.begin(), files.end());
  int accepted = 0, refused = 0, wrong = 0;
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    dtsim::fuzz::last_outcome() = Outcome::None;
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    const Outcome got = dtsim::fuzz::last_outcome();
    (got == Outcome::Accepted ? accepted : refused) += got != Outcome::None;
    const std::string name = file.filename().string();
    const bool want_ok = name.rfind("ok-", 0) == 0, want_bad = name.rfind("bad-", 0) == 0;
    if ((want_ok && got != Outcome::Accepted) || (want_bad && got != Outcome::Refused)) {
      std::fprintf(stderr, "%s: expected the input to be %s\n", file.string().c_str(), want_ok ? "accepted" : "refused");
      ++wrong;
    }
  }
  std::printf("%zu inputs from %s: %d accepted, %d refused, %d not as their names say\n", files.size(), argv[1],
              accepted, refused, wrong);
  return wrong == 0 ? 0 : 1;
}
