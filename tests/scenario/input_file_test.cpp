// The one check of what may be read as an input file (models/input_file.hpp), and the helpers that keep bad
// input's messages short and to the point (issue 57). Each read runs in a child under an alarm: a reader that
// blocks on a FIFO fails the test instead of stalling the suite.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "models/input_file.hpp"
#include "sim/scenario/keys.hpp"
#include "sim/scenario/text.hpp"
#include "tests/subprocess.hpp"

namespace dtsim::sim {
namespace {

namespace fs = std::filesystem;
using Kind = models::InputFileProblem::Kind;

class InputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dtsim_input_file_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // read_input_file in a child that SIGALRM ends after 10 s: "kind|reason|content".
  static std::string read_in_child(const std::string& path, std::uintmax_t most = 1 << 20) {
    return dtsim::testing::run_in_child([&] {
      ::alarm(10);
      models::InputFileProblem problem;
      const auto content = models::read_input_file(path, most, problem);
      return std::to_string(static_cast<int>(problem.kind)) + "|" + problem.reason + "|" + content.value_or("");
    });
  }
  static std::string kind(Kind k) { return std::to_string(static_cast<int>(k)) + "|"; }

  fs::path dir_;
};

TEST_F(InputFile, ARegularFileIsReadWhole) {
  std::ofstream(dir_ / "a.ini") << "[run]\nseed = 1\n";
  EXPECT_EQ(read_in_child((dir_ / "a.ini").string()), kind(Kind::None) + "|[run]\nseed = 1\n");
  fs::create_symlink(dir_ / "a.ini", dir_ / "link.ini");  // a link to one is read as it
  EXPECT_EQ(read_in_child((dir_ / "link.ini").string()), kind(Kind::None) + "|[run]\nseed = 1\n");
}

TEST_F(InputFile, WhatIsNotARegularFileIsRefusedWithoutReadingIt) {
  const fs::path fifo = dir_ / "fifo.ini";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const std::string special = kind(Kind::NotRegular) + "is not a regular file (a FIFO, a device or a socket)|";
  EXPECT_EQ(read_in_child(fifo.string()), special);  // blocked for ever before
  EXPECT_EQ(read_in_child("/dev/zero"), special);     // never ends
  EXPECT_EQ(read_in_child("/dev/null"), special);
  EXPECT_EQ(read_in_child(dir_.string()), kind(Kind::Folder) + "is a folder, not a file|");
  EXPECT_EQ(read_in_child((dir_ / "absent.ini").string()), kind(Kind::Missing) + "not found|");
  EXPECT_EQ(read_in_child((dir_ / "absent" / "x.ini").string()), kind(Kind::Missing) + "not found|");
  fs::create_symlink(dir_ / "loop2", dir_ / "loop1");
  fs::create_symlink(dir_ / "loop1", dir_ / "loop2");
  // Reported as "not found" until issue 57.
  EXPECT_EQ(read_in_child((dir_ / "loop1").string()),
            kind(Kind::LinkLoop) + "is a loop of symbolic links (a link that leads back to itself)|");
  EXPECT_EQ(models::input_file_problem(fifo.string()).kind, Kind::NotRegular);
  EXPECT_FALSE(models::input_file_problem((dir_ / "absent.ini").string()).kind == Kind::None);
}

TEST_F(InputFile, AFileOverItsLimitIsRefusedBeforeItIsRead) {
  std::ofstream(dir_ / "big") << std::string(2000, 'x');
  EXPECT_EQ(read_in_child((dir_ / "big").string(), 1000),
            kind(Kind::TooLarge) + "is 2000 bytes, more than the 1000 bytes such a file may hold|");
  // A file that reports no size (as /proc's do) is cut off once it passes the limit while read.
  EXPECT_EQ(read_in_child("/proc/self/maps", 16).rfind(kind(Kind::TooLarge) + "is more than the", 0), 0u);
}

// A message quoting a pasted megabyte keeps its start and its end, and says what it left out.
TEST(ShortMessages, ALongPartKeepsItsStartAndEnd) {
  const std::string text = "key." + std::string(1 << 20, 'a') + ".end";
  const std::string cut = elide_middle(text, 240);
  EXPECT_LT(cut.size(), 300u);
  EXPECT_EQ(cut.rfind("key.aaa", 0), 0u);
  EXPECT_EQ(cut.substr(cut.size() - 4), ".end");
  EXPECT_NE(cut.find("[... " + std::to_string(text.size() - 240) + " bytes left out ...]"), std::string::npos) << cut;
  EXPECT_EQ(elide_middle("short", 240), "short");
  // Never inside a UTF-8 character (× is 0xc3 0x97).
  std::string times;
  for (int i = 0; i < 100; ++i) times += "\xc3\x97";
  for (size_t most = 230; most < 250; ++most) {
    const std::string c = elide_middle(times + times + times, most);
    for (size_t i = 0; i < c.size(); ++i) {
      const unsigned char b = static_cast<unsigned char>(c[i]);
      if (b == 0xc3) {
        EXPECT_TRUE(i + 1 < c.size() && static_cast<unsigned char>(c[i + 1]) == 0x97) << most;
      }
      if (b == 0x97) {
        EXPECT_TRUE(i > 0 && static_cast<unsigned char>(c[i - 1]) == 0xc3) << most;
      }
    }
  }
}

// The suggestion for an unknown key: nothing from a section the name did not mean (foo.bar suggested
// transformer.base), a profile's own section only (a fabric profile's ffn suggested transformer.ffn), and a
// megabyte-long name compared with nothing.
TEST(ShortMessages, SuggestionsStayInTheirSection) {
  const auto key = [](const std::string& name) {
    KeySpec k;
    k.name = name;
    return k;
  };
  const KeySchema schema({key("transformer.base"), key("transformer.ffn"), key("fabric.bandwidth"), key("fabric.name"),
                          key("cluster.workers"), key("training.epochs")});
  EXPECT_EQ(schema.suggest("foo.bar"), "");
  EXPECT_EQ(schema.suggest("fabric.ffn", "fabric"), "");
  EXPECT_EQ(schema.suggest("fabric.bandwith", "fabric"), "fabric.bandwidth");
  EXPECT_EQ(schema.suggest("training.epocs"), "training.epochs");
  EXPECT_EQ(schema.suggest("training.workers"), "cluster.workers") << "the right field in the wrong section";
  EXPECT_EQ(schema.suggest("training." + std::string(1 << 20, 'a')), "");
  EXPECT_EQ(suggest_among(std::string(1 << 20, 'a'), {"aaa"}), "");
}

}  // namespace
}  // namespace dtsim::sim
