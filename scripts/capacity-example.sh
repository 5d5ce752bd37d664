#!/usr/bin/env bash
# The worked capacity-planning example of docs/workloads.md: 64 GPUs (8 nodes x 8, NVLink inside, one NIC
# per GPU) for ResNet-50 and for LoRA fine-tuning of LLaMA-7B, on three networks and three GPU profiles (each
# profile carries the price of one region). Prints a Markdown table: step time, scaling efficiency, time and
# cost per epoch of ImageNet-1k (1,281,167 images) or per billion tokens, and what a week of rental buys.
#
#   scripts/capacity-example.sh [path/to/dtsim]        # default build/dtsim
set -euo pipefail
DTSIM=${1:-build/dtsim}
IMAGENET=1281167  # ImageNet-1k training images (Russakovsky et al. 2015)
echo "| workload | GPU, price region | network | step (ms) | scaling | one epoch / 10^9 tokens | its cost (CNY) | a week of 64 GPUs buys | the week's cost (CNY) |"
echo "|---|---|---|---|---|---|---|---|---|"
for job in "resnet50 --micro-batch 256" "llama-7b-lora --micro-batch 4 --checkpointing"; do
  for gpu in a100-40gb a100-80gb h100-80gb; do
    nvlink=nvlink3-nvswitch
    [[ $gpu == h100-80gb ]] && nvlink=nvlink4-nvswitch
    for fabric in ib-ndr-400 roce-100 eth-25g-tcp; do
      # shellcheck disable=SC2086
      "$DTSIM" workload $job --gpu "$gpu" --gpus 64 --simulate --steps 5 --format json \
        --set cluster.gpus_per_node=8 --set cluster.intra_node_fabric=$nvlink --set cluster.nics_per_node=8 \
        --set cluster.topology=fat-tree --set fabric.profile=$fabric --set collective.algorithm=ring |
        /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin); s = d["simulation"]; gpu = sys.argv[1]; fabric = sys.argv[2]; imagenet = float(sys.argv[3])
lo, hi = s["cost_per_unit"]
week = 7 * 24 * 3600
if s["unit"] == "million samples":
    unit_s = imagenet / s["samples_per_second"]; scale = imagenet / 1e6
    per = "%.1f s" % unit_s; buys = "%.0f epochs" % (week / unit_s)
else:
    unit_s = s["seconds_per_unit"]; scale = 1.0
    per = "%.2f h" % (unit_s / 3600); buys = "%.0f billion tokens" % (week / unit_s)
price = ("%.1f-%.1f" if hi * scale < 10 else "%.0f-%.0f") % (lo * scale, hi * scale) if hi > 0 else "no price"
week_cost = "%.0f-%.0f" % (lo / unit_s * scale * week, hi / unit_s * scale * week) if hi > 0 else "no price"
where = gpu + ", " + (d["gpu"]["price_region"] or "no region")
print("| %s | %s | %s | %.1f | %.0f %% | %s | %s | %s | %s |" % (d["name"], where, fabric, s["step_s"] * 1e3,
      100 * s["scaling_efficiency"], per, price, buys, week_cost))
' "$gpu" "$fabric" "$IMAGENET"
    done
  done
done
