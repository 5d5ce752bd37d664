// Bad [stragglers], [background] and [faults] input through the dtsim executable: exit status 2 and one
// line that names the key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "tests/cli/run_dtsim.hpp"

namespace {

const std::string kQuickstart = std::string(DTSIM_SOURCE_DIR) + "/scenarios/quickstart.ini";

using Outcome = dtsim::testing::DtsimOutcome;

Outcome dtsim_check(const std::string& set) {
  return dtsim::testing::run_dtsim("check " + kQuickstart + " --set '" + set + "'");
}

void expect_bad_input(const std::string& set, const std::string& key, const std::string& words) {
  const Outcome o = dtsim_check(set);
  EXPECT_EQ(o.exit_code, 2) << set << "\n" << o.output;
  EXPECT_EQ(o.output.rfind("dtsim: error: command line (--set): " + key + ": ", 0), 0u) << o.output;
  EXPECT_NE(o.output.find(words), std::string::npos) << o.output;
  EXPECT_EQ(std::count(o.output.begin(), o.output.end(), '\n'), 1) << "one line: " << o.output;
}

TEST(HeterogeneityCli, BadInputNamesTheKey) {
  expect_bad_input("stragglers.slow_workers=3, 8-11", "stragglers.slow_workers", "worker 8 does not exist");
  expect_bad_input("stragglers.step_probability=1.2", "stragglers.step_probability", "out of range");
  expect_bad_input("stragglers.slow_fraction=0.01", "stragglers.slow_fraction", "rounds to no worker");
  expect_bad_input("background.link_profile=worker3: 0s 100%, 0.5s fast", "background.link_profile",
                   "not a bandwidth level");
  expect_bad_input("faults.events=node 3 down at 10s up at 5s", "faults.events", "back up before it goes down");
  expect_bad_input("faults.events=link 5 down at soon", "faults.events", "does not start with a number");
}

TEST(HeterogeneityCli, GoodInputPassesTheCheck) {
  const Outcome o = dtsim_check("stragglers.slow_workers=3, 5-6:0.25");
  EXPECT_EQ(o.exit_code, 0) << o.output;
}

}  // namespace
