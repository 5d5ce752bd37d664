// The numbers of NCCL's tuning model, in one place: the protocol model (protocol.cpp) charges its latencies
// inside the simulation, and NCCL's tuner (nccl_tuning.cpp) predicts with all of them to choose an algorithm
// and a protocol as NCCL does. From NVIDIA/nccl, src/graph/tuning.cc (ncclTunerConstantsDefaults, master of
// 2026; the ring and tree entries are those of release 2.28) and src/graph/search.cc (the speed arrays).
// Latencies in µs, bandwidths in GB/s; protocols in NCCL's order LL, LL128, Simple.
#pragma once

#include <stdexcept>

#include "sim/config/collective_types.hpp"

namespace dtsim::sim::nccl {

// The column of a protocol in NCCL's tables: LL, LL128, Simple (std::invalid_argument for None and Auto).
inline int protocol_column(Protocol p) {
  switch (p) {
    case Protocol::LL: return 0;
    case Protocol::LL128: return 1;
    case Protocol::Simple: return 2;
    case Protocol::None:
    case Protocol::Auto: break;
  }
  throw std::invalid_argument("NCCL's tables have no column for this protocol");
}

struct AlgorithmLatencies {
  double base[3];     // baseLatencies: once per call
  double nvlink[3];   // hwLatencies, a hop over NVLink
  double pcie[3];     // hwLatencies, a hop over PCIe
  double network[3];  // hwLatencies, a hop across the network
};
inline constexpr AlgorithmLatencies kRing = {{6.6, 14.0, 8.4}, {0.6, 1.9, 3.4}, {1.0, 2.5, 5.7}, {2.7, 4.0, 14.0}};
inline constexpr AlgorithmLatencies kTree = {{6.8, 14.0, 8.4}, {0.6, 1.25, 4.0}, {1.0, 1.9, 4.0}, {5.0, 8.5, 14.0}};

// What a proxy thread costs to post a network operation on an x86 Intel host (getNetOverhead; 2 µs on AMD),
// three times that for Simple: every step of a ring across nodes waits at least this long.
inline constexpr double kNetOverheadUs = 1.0;

// Rows by GPU generation: Volta (compute capability 7.x), Ampere (8.x), Hopper (9.x), Blackwell (10.x and up).
// Columns by scale: one node, two nodes, more.
// llMaxBws: LL's bus bandwidth cap. On one node the row is the GPU's; on several, the CPU's (row 0 for Intel,
// row 1 for AMD).
inline constexpr double kLlMaxBw[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
inline constexpr double kPerChannelRingLl128Bw[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}};
inline constexpr double kPerChannelTreeLl128Bw[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
inline constexpr double kPerChannelTreeBw[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};

// treeCorrectionFactor: the tree's bandwidth scaled by message size, indexed by log2(bytes / 64) from 0 to 23
// (64 B to 512 MiB); NCCL's comment says trees do not follow the model at medium sizes.
inline constexpr double kTreeCorrection[3][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};

// The ring's Simple latency is multiplied by this for an allreduce across nodes once every rank's share per
// channel reaches 64 bytes ("plateau effect of ring"): 1.9 before Ampere.
inline constexpr double kRingPlateau = 1.4;
inline constexpr double kRingPlateauBeforeAmpere = 1.9;

// The per-channel bandwidths NCCL's topology search tries, highest first, inside a node (one node) and across
// nodes, by generation: before Hopper, Hopper, Blackwell.
inline constexpr double kSpeedsIntra[] = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0};
inline constexpr double kSpeedsInter[] = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                          7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
inline constexpr double kSm90SpeedsIntra[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
inline constexpr double kSm90SpeedsInter[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                              15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
inline constexpr double kSm100SpeedsIntra[] = {90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
inline constexpr double kSm100SpeedsInter[] = {96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0,
                                               20.0, 17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
// The most channels the search builds for a ring or a tree (MAXCHANNELS / 2).
inline constexpr int kMaxSearchChannels = 16;

}  // namespace dtsim::sim::nccl
