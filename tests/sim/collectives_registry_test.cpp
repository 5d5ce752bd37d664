// The algorithm registries: every Algorithm has one descriptor (config: name, kinds, keys) and one
// implementation (collectives: plan, misfit, closed form); the keys' choices come from the name tables;
// can_serve answers as make_collective's refusal does; CollectiveError names no scenario key.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/collectives/collective.hpp"
#include "sim/collectives/registry.hpp"
#include "sim/config/collective_algorithms.hpp"
#include "sim/config/schema.hpp"
#include "sim/world/platform.hpp"
#include "tests/sim/collectives_support.hpp"
#include "tests/subprocess.hpp"

namespace dtsim::sim {
namespace {

const std::vector<Algorithm> kEveryAlgorithm = {Algorithm::Ring, Algorithm::DoubleBinaryTree,
                                                Algorithm::HalvingDoubling, Algorithm::Hierarchical,
                                                Algorithm::Direct, Algorithm::Auto};
const std::vector<CollectiveKind> kEveryKind = {CollectiveKind::Allreduce, CollectiveKind::ReduceScatter,
                                                CollectiveKind::AllGather, CollectiveKind::Broadcast,
                                                CollectiveKind::Reduce,    CollectiveKind::AllToAll};

// A group of ranks in nodes, without hosts: enough for can_serve, which looks at the nodes only.
Platform group_of(const std::vector<std::vector<int>>& nodes) {
  Platform p;
  for (size_t n = 0; n < nodes.size(); ++n)
    for (const int r : nodes[n]) {
      (void)r;
      p.node_of_worker.push_back(static_cast<int>(n));
      p.workers.push_back(nullptr);
    }
  p.workers_of_node = nodes;
  return p;
}

TEST(AlgorithmRegistry, EveryAlgorithmHasOneDescriptorAndOneImplementation) {
  ASSERT_EQ(algorithm_registry().size(), kEveryAlgorithm.size());
  ASSERT_EQ(algorithm_implementations().size(), kEveryAlgorithm.size());
  for (const Algorithm a : kEveryAlgorithm) {
    const auto same = [a](const auto& entry) { return entry.algorithm == a; };
    EXPECT_EQ(std::count_if(algorithm_registry().begin(), algorithm_registry().end(), same), 1) << to_string(a);
    EXPECT_EQ(std::count_if(algorithm_implementations().begin(), algorithm_implementations().end(), same), 1)
        << to_string(a);
    EXPECT_EQ(algorithm_descriptor(a).algorithm, a);
    EXPECT_EQ(implementation_of(a).algorithm, a);
    // A plan of its own, or (auto) candidates to choose among.
    EXPECT_NE(implementation_of(a).plan != nullptr, implementation_of(a).candidates != nullptr) << to_string(a);
    // A flat algorithm has a closed form of one link; the hierarchical one has two levels.
    EXPECT_EQ(implementation_of(a).closed_form != nullptr, algorithm_descriptor(a).flat) << to_string(a);
    Algorithm parsed;
    ASSERT_TRUE(parse_algorithm(algorithm_descriptor(a).name, parsed));
    EXPECT_EQ(parsed, a);
    EXPECT_STREQ(to_string(a), algorithm_descriptor(a).name);
  }
  EXPECT_EQ(algorithm_names(),
            (std::vector<std::string>{"ring", "tree", "halving-doubling", "hierarchical", "direct", "auto"}));
}

TEST(AlgorithmRegistry, KindsAsBefore) {
  // Allreduce: all but direct; reduce-scatter, all-gather, broadcast and reduce: ring only; all-to-all:
  // direct only; auto picks among those, so it implements every kind.
  for (const Algorithm a : kEveryAlgorithm)
    for (const CollectiveKind k : kEveryKind) {
      const bool expected = a == Algorithm::Auto                ? true
                            : k == CollectiveKind::AllToAll ? a == Algorithm::Direct
                            : a == Algorithm::Direct      ? false
                                                          : k == CollectiveKind::Allreduce || a == Algorithm::Ring;
      EXPECT_EQ(algorithm_descriptor(a).implements(k), expected) << to_string(a) << " " << to_string(k);
    }
}

TEST(AlgorithmRegistry, KeysAreCollectiveKeysOfTheSchema) {
  for (const AlgorithmDescriptor& d : algorithm_registry())
    for (const auto* list : {&d.keys, &d.chain_keys})
      for (const std::string& key : *list) {
        EXPECT_EQ(key.rfind("collective.", 0), 0u) << d.name << ": " << key;
        EXPECT_NE(find_key(key), nullptr) << d.name << ": " << key;
      }
  using Keys = std::vector<std::string>;
  const Keys pipeline = {"collective.pipeline_chunk", "collective.pipeline_chunks_max"};
  EXPECT_EQ(algorithm_descriptor(Algorithm::Ring).keys, Keys{"collective.channels"});
  EXPECT_EQ(algorithm_descriptor(Algorithm::Ring).chain_keys, pipeline) << "its broadcast and reduce chain";
  EXPECT_EQ(algorithm_descriptor(Algorithm::DoubleBinaryTree).keys,
            (Keys{"collective.pipeline_chunk", "collective.pipeline_chunks_max", "collective.channels"}))
      << "NCCL's tree runs a pair of trees per channel";
  EXPECT_EQ(algorithm_descriptor(Algorithm::HalvingDoubling).keys, Keys{});
  EXPECT_EQ(algorithm_descriptor(Algorithm::Hierarchical).keys, Keys{"collective.inter_node"});
  const std::vector<CollectiveKind>& training = training_collective_kinds();
  // Hierarchical also reads what its inter-node algorithm reads; a flat one ignores inter_node.
  EXPECT_EQ(collective_keys_read(Algorithm::Hierarchical, Algorithm::HalvingDoubling, training),
            Keys{"collective.inter_node"});
  EXPECT_EQ(collective_keys_read(Algorithm::Hierarchical, Algorithm::DoubleBinaryTree, training),
            (Keys{"collective.inter_node", "collective.pipeline_chunk", "collective.pipeline_chunks_max",
                  "collective.channels"}));
  EXPECT_EQ(collective_keys_read(Algorithm::HalvingDoubling, Algorithm::DoubleBinaryTree, training), Keys{});
  // The ring pipelines only its chain: training never reads the pipeline keys, a broadcast does; and the chain
  // has no channels.
  EXPECT_EQ(collective_keys_read(Algorithm::Ring, Algorithm::Ring, training), Keys{"collective.channels"});
  EXPECT_EQ(collective_keys_read(Algorithm::Ring, Algorithm::Ring, {CollectiveKind::Broadcast}), pipeline);
  EXPECT_EQ(collective_keys_read(Algorithm::Ring, Algorithm::Ring, {CollectiveKind::Broadcast, CollectiveKind::Allreduce}),
            (Keys{"collective.channels", "collective.pipeline_chunk", "collective.pipeline_chunks_max"}));
}

TEST(AlgorithmRegistry, KeyChoicesComeFromTheNameTables) {
  EXPECT_EQ(find_key("collective.algorithm")->choices, algorithm_names());
  EXPECT_EQ(find_key("collective.fidelity")->choices, fidelity_names());
  EXPECT_EQ(fidelity_names(), (std::vector<std::string>{"auto", "stepwise", "aggregated", "analytic"}));
  EXPECT_EQ(find_key("collective.inter_node")->choices,
            (std::vector<std::string>{"ring", "tree", "halving-doubling"}));
}

TEST(CanServe, AnswersAsTheOldRefusals) {
  const Platform equal = group_of({{0, 1}, {2, 3}});
  const Platform unequal = group_of({{0, 1, 2}, {3}});
  for (const Algorithm a : kEveryAlgorithm)
    for (const CollectiveKind k : kEveryKind) {
      const bool implemented = algorithm_descriptor(a).implements(k);
      EXPECT_EQ(can_serve(k, a, equal), implemented) << to_string(a) << " " << to_string(k);
      EXPECT_EQ(can_serve(k, a, unequal), implemented && a != Algorithm::Hierarchical)
          << to_string(a) << " " << to_string(k);
    }
}

TEST(CollectiveError, CarriesReasonAndHintButNoKey) {
  const auto unsupported = refusal(CollectiveKind::Broadcast, Algorithm::DoubleBinaryTree, group_of({{0, 1}}));
  ASSERT_TRUE(unsupported.has_value());
  EXPECT_EQ(unsupported->cause(), CollectiveError::Cause::Algorithm);
  EXPECT_EQ(unsupported->reason(), "'tree' does not implement broadcast");
  EXPECT_EQ(unsupported->hint(), "use ring (the only algorithm for reduce_scatter, all_gather, broadcast and reduce)");

  const auto unequal = refusal(CollectiveKind::Allreduce, Algorithm::Hierarchical, group_of({{0, 1, 2}, {3}}));
  ASSERT_TRUE(unequal.has_value());
  EXPECT_EQ(unequal->cause(), CollectiveError::Cause::Algorithm);
  EXPECT_EQ(unequal->reason(), "hierarchical allreduce needs the same number of ranks on every node (found 3 and 1)");
  EXPECT_EQ(unequal->hint(), "use ring, tree or halving-doubling");
  EXPECT_EQ(std::string(unequal->what()), unequal->reason() + "; " + unequal->hint());

  for (const auto& e : {*unsupported, *unequal}) {
    EXPECT_EQ(std::string(e.what()).find("collective."), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
  }
}

// make_collective refuses exactly what can_serve refuses, with CollectiveError, and accepts the rest.
TEST(CanServe, AgreesWithMakeCollective) {
  const std::string out = dtsim::testing::run_in_child([] {
    auto engine = testing::create_exact_engine();
    Platform p = build_star(4, 1e12, testing::hdr_fabric());
    std::string log;
    int calls = 0;
    for (const std::vector<std::vector<int>>& nodes :
         {std::vector<std::vector<int>>{{0, 1}, {2, 3}}, std::vector<std::vector<int>>{{0, 1, 2}, {3}}}) {
      p.workers_of_node = nodes;
      for (const Algorithm a : kEveryAlgorithm)
        for (const CollectiveKind k : kEveryKind) {
          bool made = true;
          try {
            make_collective(k, a, Fidelity::Stepwise, p, "c" + std::to_string(calls++));
          } catch (const CollectiveError& e) {
            made = false;
            if (e.cause() != CollectiveError::Cause::Algorithm) log += std::string("wrong cause: ") + e.what() + "\n";
          }
          if (made != can_serve(k, a, p))
            log += std::string(to_string(a)) + " " + to_string(k) + ": made " + (made ? "yes" : "no") + "\n";
        }
    }
    CollectiveOptions root;
    root.root = 4;
    try {
      make_collective(CollectiveKind::Broadcast, Algorithm::Ring, Fidelity::Stepwise, p, "root", root);
      log += "root 4 accepted\n";
    } catch (const CollectiveError& e) {
      if (e.cause() != CollectiveError::Cause::Root || std::string(e.what()) != "root 4 is not a rank")
        log += std::string("root: ") + e.what() + "\n";
    }
    return log.empty() ? std::string("agree") : log;
  });
  EXPECT_EQ(out, "agree");
}

}  // namespace
}  // namespace dtsim::sim
