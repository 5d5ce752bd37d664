#!/usr/bin/env bash
# Reproduces the nccl-tests validation table of docs/validation.md: every row's dtsim collective command,
# its prediction and its error against the published measurement (cited in the docs).
#   scripts/validate-collectives.sh [path/to/dtsim]      (default: build/dtsim)
# Columns: id, what is compared (busbw GB/s or time us), measured, predicted, error %.
# A row runs NCCL's own choice (--algorithm auto, --protocol auto: NCCL's tuning model on the row's GPUs) unless
# its source forced an algorithm (NCCL_ALGO) or a protocol (NCCL_PROTO); the default ring stands for
# NCCL_ALGO=Ring.
set -euo pipefail
DTSIM=${1:-build/dtsim}
HGX_A100="--gpu a100-80gb --gpus-per-node 8 --set cluster.intra_node_fabric=nvlink3-nvswitch"
HGX_H100="--gpu h100-80gb --gpus-per-node 8 --set cluster.intra_node_fabric=nvlink4-nvswitch"

# row ID METRIC MEASURED ARGS...: METRIC is busbw (GB/s) or time (us) of the single size in ARGS.
row() {
  local id=$1 metric=$2 measured=$3; shift 3
  local line
  local protocol=(--protocol auto)
  case " $* " in *" --protocol "*) protocol=() ;; esac
  line=$("$DTSIM" collective --format csv "${protocol[@]}" "$@" | tail -n 1)
  local predicted
  if [ "$metric" = busbw ]; then predicted=$(cut -d, -f6 <<<"$line"); else predicted=$(cut -d, -f4 <<<"$line"); fi
  awk -v id="$id" -v m="$metric" -v a="$measured" -v p="$predicted" -v v="$(cut -d, -f9 <<<"$line")" \
    'BEGIN { printf "%-4s %-6s measured %9.2f  predicted %9.2f  error %+6.1f %%  (%s)\n", id, m, a, p, 100 * (p - a) / a, v }'
}

echo "# large messages: bus bandwidth (GB/s)"
row L1 busbw 231.58 --algorithm auto --ranks 8 $HGX_A100 --sizes 8GiB
row L2 busbw 392.69 --ranks 16 $HGX_H100 --set cluster.nics_per_node=8 --profile ib-ndr-400 --sizes 8GiB --fidelity aggregated
row L3 busbw 364.93 --ranks 32 $HGX_H100 --set cluster.nics_per_node=8 --profile ib-ndr-400 --sizes 8GiB --fidelity aggregated
row L4 busbw 320.70 --algorithm auto --ranks 64 $HGX_H100 --set cluster.nics_per_node=8 --profile ib-ndr-400 --sizes 8GiB --fidelity aggregated
row L5 busbw 364.57 --ranks 1024 --gpus-per-node 8 --set cluster.intra_node_fabric=nvlink4-nvswitch --set cluster.nics_per_node=8 --profile roce-400 --sizes 8GiB --protocol ll128 --fidelity analytic
row L6 busbw 192.00 --algorithm auto --ranks 16 $HGX_A100 --set cluster.nics_per_node=8 --sizes 8GiB --fidelity aggregated
row L7 busbw 194.06 --algorithm auto --ranks 16 $HGX_A100 --set cluster.nics_per_node=8 --sizes 2GiB --fidelity aggregated
row L8 busbw 96.00 --algorithm auto --ranks 24 $HGX_A100 --set cluster.nics_per_node=4 --sizes 128MiB
row L9 busbw 12.20 --algorithm auto --ranks 32 $HGX_A100 --set fabric.bandwidth=100Gbps --sizes 1GiB --fidelity aggregated
row L10 busbw 190.00 --ranks 40 $HGX_H100 --set cluster.nics_per_node=4 --profile roce-400 --sizes 1GiB --fidelity aggregated
row L11 busbw 150.00 --ranks 40 $HGX_H100 --set cluster.nics_per_node=4 --profile roce-400 --algorithm tree --sizes 1GiB --fidelity aggregated
echo "# small messages: time (us)"
row S1 time 13.03 --algorithm auto --ranks 8 $HGX_H100 --sizes 8B
row S2 time 18.85 --algorithm auto --ranks 8 $HGX_H100 --sizes 64KiB
row S3 time 26.93 --algorithm auto --ranks 8 $HGX_H100 --sizes 1MiB
row S4 time 19.50 --algorithm auto --ranks 2 --sizes 8B
row S5 time 24.70 --algorithm auto --ranks 16 $HGX_H100 --set cluster.nics_per_node=8 --profile ib-ndr-400 --sizes 8B
row S6 time 33.08 --algorithm auto --ranks 16 $HGX_H100 --set cluster.nics_per_node=8 --profile ib-ndr-400 --sizes 64KiB
row S7 time 34.75 --algorithm auto --ranks 32 $HGX_H100 --set cluster.nics_per_node=8 --profile ib-ndr-400 --sizes 8B
row S8 time 27.70 --algorithm auto --ranks 16 $HGX_A100 --set cluster.nics_per_node=8 --sizes 8B
row S9 time 34.74 --algorithm auto --ranks 16 $HGX_A100 --set cluster.nics_per_node=8 --profile roce-100 --sizes 8B
