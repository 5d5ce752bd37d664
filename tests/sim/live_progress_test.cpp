// The live progress display's text (percentage, simulated time, ETA from the pace so far) and its drawing:
// in place with a carriage return and an erase, erased by clear(), and nothing at all when disabled.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "sim/app/live_progress.hpp"

namespace dtsim::sim {
namespace {

TEST(LiveProgressText, SaysHowFarAndEstimatesTheRestFromThePaceSoFar) {
  // 120 of 600 steps took 10 s: the other 480 take 40 s at the same pace.
  EXPECT_EQ(live_progress_text("step", 120, 600, 1.25, 10.0), "step 120/600  20 %  simulated 1.25 s  elapsed 10 s  ETA 40 s");
  // Minutes and hours read as such: 1 of 100 rounds in 100 s leaves 9900 s = 2 h 45 min.
  EXPECT_EQ(live_progress_text("round", 1, 100, 3.0, 100.0),
            "round 1/100  1 %  simulated 3 s  elapsed 1 min 40 s  ETA 2 h 45 min");
}

TEST(LiveProgressText, HasNoEstimateWithoutATotalOrOnceDone) {
  EXPECT_EQ(live_progress_text("update", 928, 0, 0.5, 2.0), "update 928  simulated 0.5 s  elapsed 2 s");
  EXPECT_EQ(live_progress_text("step", 600, 600, 7.0, 61.0), "step 600/600  100 %  simulated 7 s  elapsed 1 min 01 s");
  EXPECT_EQ(live_progress_text("step", 0, 600, 0.0, 0.0), "step 0/600  0 %  simulated 0 s  elapsed 0 s");
}

std::string drawn(bool enabled, int steps) {
  char* buffer = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  {
    LiveProgress live(enabled, "step", out);
    for (int s = 1; s <= steps; ++s) live.step(s, steps, 0.001 * s);
  }  // the destructor erases the line
  std::fclose(out);
  std::string text(buffer, size);
  std::free(buffer);
  return text;
}

TEST(LiveProgress, RedrawsOneLineInPlaceAndErasesItAtTheEnd) {
  const std::string text = drawn(true, 50);
  EXPECT_EQ(text.find('\n'), std::string::npos) << "never a new line";
  EXPECT_EQ(text.rfind("\r\033[K", 0), 0u) << "each draw starts by erasing the line";
  EXPECT_NE(text.find("step 1/50"), std::string::npos) << "the first step is drawn";
  EXPECT_NE(text.find("step 50/50  100 %"), std::string::npos) << "the last one is always drawn";
  // 50 steps in far less than the redraw interval: the first and the last only.
  EXPECT_EQ(text.find("step 2/50"), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - 4), "\r\033[K") << "cleared at the end";
}

TEST(LiveProgress, DrawsAStepOnceHoweverOftenItIsReported) {
  char* buffer = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  {
    LiveProgress live(true, "step", out);
    for (int worker = 0; worker < 8; ++worker) live.step(3, 3, 0.5);  // the last step, from every worker
  }
  std::fclose(out);
  const std::string text(buffer, size);
  std::free(buffer);
  EXPECT_EQ(text.find("step 3/3"), text.rfind("step 3/3")) << text;
}

TEST(LiveProgress, WritesNothingWhenDisabled) { EXPECT_EQ(drawn(false, 50), ""); }

}  // namespace
}  // namespace dtsim::sim
