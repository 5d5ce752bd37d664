#!/usr/bin/env bash
# Reproduces the step-time validation table of docs/validation.md: every row's `dtsim workload --simulate`
# command, its per-GPU throughput and its step-time error against the published measurement (cited in the
# docs). No value of any profile was set from these measurements.
#   scripts/validate-step-times.sh [path/to/dtsim]      (default: build/dtsim)
# Columns: id, GPUs, measured and predicted throughput per GPU (tokens/s or images/s), step-time error %:
# predicted step / measured step − 1 = measured throughput / predicted throughput − 1.
# Every row times its products from their shapes (compute.matmul = tiles) and its memory-bound kernels at the
# profile's measured share of the bandwidth, and waits for eager PyTorch's dispatch where kernels are short;
# gpu.efficiency takes no part.
set -euo pipefail
DTSIM=${1:-build/dtsim}
TILES="--set compute.matmul=tiles --steps 3"
# Every job runs eager PyTorch: each kernel waits for PyTorch's dispatch on the host (3.3 us, the framework
# profiles' value, from PyTorch's operator micro-benchmark), where its kernels are shorter than that.
EAGER="--set compute.host_dispatch=3.3us"
# MosaicML's platform (llm-foundry's benchmark tables): 8 GPUs a node on NVSwitch, 1600 Gb/s between nodes
# as 8 RoCE NICs of 200 Gb/s. The H100 tables name no interconnect: 8 NDR 400 Gb/s NICs a node are assumed.
# A job on one node (8 GPUs) gets the node alone: no traffic crosses the network, and dtsim refuses network keys
# that would have no effect.
MOSAIC_A100_NODE="--set cluster.gpus_per_node=8 --set cluster.intra_node_fabric=nvlink3-nvswitch"
MOSAIC_A100="$MOSAIC_A100_NODE --set cluster.nics_per_node=8 --set fabric.profile=roce-200 --set cluster.topology=fat-tree"
MOSAIC_H100_NODE="--set cluster.gpus_per_node=8 --set cluster.intra_node_fabric=nvlink4-nvswitch"
MOSAIC_H100="$MOSAIC_H100_NODE --set cluster.nics_per_node=8 --set fabric.profile=ib-ndr-400 --set cluster.topology=fat-tree"
FSDP="--zero 3 --optimizer-kernels foreach"
DGX_A100="--gpu a100-80gb --set cluster.gpus_per_node=8 --set cluster.intra_node_fabric=nvlink3-nvswitch"

# row ID GPUS MEASURED WORKLOAD ARGS...: MEASURED is the published throughput per GPU.
row() {
  local id=$1 gpus=$2 measured=$3 workload=$4; shift 4
  local predicted
  predicted=$("$DTSIM" workload "$workload" --gpus "$gpus" --simulate $TILES $EAGER --format json "$@" |
    python3 -c 'import json, sys
s = json.load(sys.stdin)["simulation"]
print(s["tokens_per_second"] / s["workers"] if s["unit"] == "billion tokens" else s["samples_per_second"] / s["workers"])')
  awk -v id="$id" -v g="$gpus" -v a="$measured" -v p="$predicted" \
    'BEGIN { printf "%-4s %5d GPUs  measured %9.1f  predicted %9.1f  error %+6.1f %%\n", id, g, a, p, 100 * (a / p - 1) }'
}

echo "# FSDP (llm-foundry MPT, sequences of 2048 tokens), A100 40GB, activation checkpointing"
row F1   32 3725 mpt-7b  --gpu a100-40gb --micro-batch 18 --checkpointing $FSDP $MOSAIC_A100
row F2  128 3623 mpt-7b  --gpu a100-40gb --micro-batch 18 --checkpointing $FSDP $MOSAIC_A100
row F3   16 1993 mpt-13b --gpu a100-40gb --micro-batch 10 --checkpointing $FSDP $MOSAIC_A100
row F4   64 1976 mpt-13b --gpu a100-40gb --micro-batch 16 --checkpointing $FSDP $MOSAIC_A100
row F5   32  857 mpt-30b --gpu a100-40gb --micro-batch 4 --checkpointing $FSDP $MOSAIC_A100
row F6  128  865 mpt-30b --gpu a100-40gb --micro-batch 6 --checkpointing $FSDP $MOSAIC_A100
row F7   64  276 mpt-70b --gpu a100-40gb --micro-batch 2 --checkpointing $FSDP $MOSAIC_A100
row F8  128  376 mpt-70b --gpu a100-40gb --micro-batch 4 --checkpointing $FSDP $MOSAIC_A100
echo "# FSDP with gradient accumulation (every micro-batch gathers and reduce-scatters), A100 40GB, checkpointing"
row F9    8 3679 mpt-7b  --gpu a100-40gb --micro-batch 12 --checkpointing --set sync.accumulation_steps=4 $FSDP $MOSAIC_A100_NODE
row F10   8 1668 mpt-13b --gpu a100-40gb --micro-batch 4 --checkpointing --set sync.accumulation_steps=16 $FSDP $MOSAIC_A100_NODE
echo "# FSDP, A100 40GB, no checkpointing"
row F11  64 9736 mpt-3b  --gpu a100-40gb --micro-batch 6 $FSDP $MOSAIC_A100
row F12 128 9538 mpt-3b  --gpu a100-40gb --micro-batch 6 $FSDP $MOSAIC_A100
echo "# FSDP, A100 80GB (the table's 1600 Gb/s RoCE nodes), with gradient accumulation"
row A1    8 4641 mpt-7b  --gpu a100-80gb --micro-batch 6 --set sync.accumulation_steps=2 $FSDP $MOSAIC_A100_NODE
row A2    8 2262 mpt-13b --gpu a100-80gb --micro-batch 2 --set sync.accumulation_steps=3 $FSDP $MOSAIC_A100_NODE
row A3    8  916 mpt-30b --gpu a100-80gb --micro-batch 3 --checkpointing --set sync.accumulation_steps=21 $FSDP $MOSAIC_A100_NODE
row A4   64  410 mpt-70b --gpu a100-80gb --micro-batch 8 --checkpointing --set sync.accumulation_steps=4 $FSDP $MOSAIC_A100
row A5    8 10811 mpt-3b --gpu a100-80gb --micro-batch 10 --set sync.accumulation_steps=2 $FSDP $MOSAIC_A100_NODE
row A6    8 20513 mpt-1b --gpu a100-80gb --micro-batch 14 --set sync.accumulation_steps=4 $FSDP $MOSAIC_A100_NODE
echo "# FSDP, H100 80GB, no checkpointing"
row H1    8 45455 mpt-1b --gpu h100-80gb --micro-batch 14 $FSDP $MOSAIC_H100_NODE
row H2   64 44402 mpt-1b --gpu h100-80gb --micro-batch 20 $FSDP $MOSAIC_H100
row H3   32 67971 mpt-760m --gpu h100-80gb --micro-batch 24 $FSDP $MOSAIC_H100
row H4    8 10643 mpt-7b --gpu h100-80gb --micro-batch 6 $FSDP $MOSAIC_H100_NODE
row H5    8 4792 mpt-13b --gpu h100-80gb --micro-batch 2 $FSDP $MOSAIC_H100_NODE
row H6   64 4800 mpt-13b --gpu h100-80gb --micro-batch 2 $FSDP $MOSAIC_H100
echo "# FSDP, H100 80GB, checkpointing and gradient accumulation"
row H7   64 1039 mpt-70b --gpu h100-80gb --micro-batch 8 --checkpointing --set sync.accumulation_steps=4 $FSDP $MOSAIC_H100
row H8   16 2263 mpt-30b --gpu h100-80gb --micro-batch 10 --checkpointing --set sync.accumulation_steps=3 $FSDP $MOSAIC_H100
echo "# DDP (DeepLearningExamples ResNet-50 v1.5, mixed precision, 256 images per GPU), DGX A100 80GB"
row D1    1 2470 resnet50 --micro-batch 256 --optimizer sgd-momentum --optimizer-kernels foreach --gpu a100-80gb
row D2    8 2077.6 resnet50 --micro-batch 256 --optimizer sgd-momentum --optimizer-kernels foreach $DGX_A100
