#!/usr/bin/env python3
"""Writes tests/corpus/cases.txt: the bad-input corpus with each case's exit status and first stderr line as
the dtsim binary given gives them today. Run it after a deliberate change of messages, then read the diff of
cases.txt line by line: every expected line must be the message a user should see (file, line, key, reason,
hint), never just what the code happens to print.

    python3 tests/corpus/record_cases.py build/dtsim --rerun tests/corpus/cases.txt > new.txt

reruns every case of cases.txt as written there (some were added by hand, and are not in CASES below), with the
same files and arguments, and appends the cases of CASES it does not hold yet. Without --rerun, only CASES are
recorded.
"""
import os
import shutil
import subprocess
import sys
import tempfile

from corpus_file import rerun_corpus

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
QUICK = "{quickstart}"
CHECK = "check " + QUICK


def case(name, args, files=None, env=None):
    return {"name": name, "args": args, "files": files or {}, "env": env}


def s(name, content, args="check {dir}/s.ini"):
    """A scenario file case."""
    return case(name, args, {"s.ini": content})


def setcase(name, assignment, command=CHECK):
    return case(name, command + " --set '" + assignment + "'")


CASES = []

# ---- scenario file syntax ---------------------------------------------------------------------------------
CASES += [
    s("unknown_key", "[training]\\nepocs = 2\\n"),
    s("unknown_section", "[trainig]\\nepochs = 2\\n"),
    s("key_outside_section", "epochs = 2\\n"),
    s("missing_equals", "[training]\\nepochs 2\\n"),
    s("empty_value", "[training]\\nepochs =\\n"),
    s("duplicate_key", "[training]\\nepochs = 2\\nepochs = 3\\n"),
    s("unclosed_section", "[training\\nepochs = 2\\n"),
    s("section_with_spaces", "[ training ]\\nepochs = 2\\nnope = 1\\n"),
    s("empty_section_name", "[]\\nepochs = 2\\n"),
    s("cr_only_line_endings", "[training]\\repochs = 2\\rlr = 0.1\\r\\c"),
    s("nul_byte_in_value", "[training]\\nepochs = 2\\x003\\n"),
    s("escape_sequence_in_value", "[run]\\nname = a\\x1b[31mred\\n"),
    s("utf8_bom_then_unknown_key", "\\xef\\xbb\\xbf[training]\\nepocs = 2\\n"),
    s("utf16_le_file", "\\xff\\xfe[\\x00t\\x00r\\x00a\\x00]\\x00\\n\\x00"),
    s("binary_garbage", "\\x7fELF\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\n"),
    s("only_comments_then_bad_value", "# a comment\\n; another\\n[cluster]\\nworkers = many\\n"),
    s("value_with_trailing_words", "[training]\\nepochs = 2 epochs\\n"),
    s("very_long_line", "[run]\\nname = " + "x" * 5000 + "\\n"),
    case("scenario_missing", "check {dir}/absent.ini"),
    case("scenario_is_a_folder", "check {dir}"),
    case("scenario_is_dev_null", "check /dev/null"),
]

# ---- values of each type ----------------------------------------------------------------------------------
CASES += [
    setcase("int_not_a_number", "cluster.workers=eight"),
    setcase("int_with_fraction", "cluster.workers=2.5"),
    setcase("int_zero_workers", "cluster.workers=0"),
    setcase("int_too_many_workers", "cluster.workers=1000000"),
    setcase("int_negative_epochs", "training.epochs=-1"),
    setcase("int_overflow", "training.max_steps=99999999999999999999999"),
    setcase("real_not_a_number", "training.lr=fast"),
    setcase("real_nan", "training.lr=nan"),
    setcase("real_inf", "training.lr=inf"),
    setcase("real_negative_lr", "training.lr=-0.1"),
    setcase("real_momentum_one", "training.momentum=1"),
    setcase("bool_bad", "sync.overlap=maybe"),
    setcase("choice_bad_with_suggestion", "training.optimizer=adamm"),
    setcase("choice_bad_no_suggestion", "training.optimizer=rmsprop"),
    setcase("choice_case", "training.strategy=SYNC"),
    setcase("choice_strategy_typo", "training.strategy=asyncps"),
    setcase("choice_topology_typo", "cluster.topology=fattree"),
    setcase("choice_compressor_typo", "compression.kind=top-k"),
    setcase("choice_partition_typo", "data.partition=dirichlet2"),
    setcase("choice_model_typo", "model.arch=resnet"),
    setcase("quantity_no_unit", "fabric.bandwidth=200"),
    setcase("quantity_bad_unit", "fabric.bandwidth=200Gbs"),
    setcase("quantity_wrong_dimension", "fabric.bandwidth=2us"),
    setcase("quantity_negative_latency", "fabric.link_latency=-1us"),
    setcase("quantity_huge_bandwidth", "fabric.bandwidth=1e300GB/s"),
    setcase("quantity_tiny_bandwidth", "fabric.bandwidth=1e-9B/s"),
    setcase("quantity_huge_flops", "gpu.peak_fp32=1e30TFLOPS"),
    setcase("quantity_tiny_flops", "gpu.peak_fp32=1e-30TFLOPS"),
    setcase("quantity_huge_memory", "gpu.memory=1e30B"),
    setcase("quantity_huge_time", "sync.fault_timeout=1e12s"),
    setcase("quantity_nan", "fabric.bandwidth=nanGB/s"),
    setcase("quantity_inf", "fabric.bandwidth=infGB/s"),
    setcase("quantity_zero_bandwidth", "fabric.bandwidth=0GB/s"),
    setcase("int_list_bad", "model.hidden=256,abc"),
    setcase("int_list_zero", "model.hidden=256,0"),
    setcase("int_list_empty_item", "model.hidden=256,,128"),
    setcase("efficiency_above_one", "gpu.efficiency=1.5"),
    setcase("warmup_epochs_huge", "training.warmup_epochs=1e308"),
    setcase("decay_every_huge", "training.decay_every_epochs=1e308"),
    setcase("step_slowdown_huge", "stragglers.step_slowdown=1e300"),
    setcase("seed_negative", "run.seed=-5"),
    setcase("run_name_path", "run.name=../../escape"),
    setcase("run_name_slash", "run.name=a/b"),
    setcase("run_name_dot", "run.name=.hidden"),
    setcase("run_name_space", "run.name=my run"),
    setcase("target_accuracy_above_one", "eval.target_accuracy=1.5"),
    setcase("divergence_factor_below_one", "eval.divergence_factor=0.5"),
]

# ---- rules across keys ------------------------------------------------------------------------------------
CASES += [
    setcase("warmup_both", "training.warmup_epochs=1' --set 'training.warmup_steps=10"),
    setcase("warmup_start_not_a_rate", "training.warmup_steps=10' --set 'training.warmup_start_lr=fast"),
    setcase("warmup_start_above_peak", "training.warmup_steps=10' --set 'training.warmup_start_lr=5"),
    setcase("batch_too_large", "training.batch_per_worker=100000"),
    setcase("train_samples_above_dataset", "data.train_samples=100000000"),
    setcase("test_samples_above_dataset", "data.test_samples=100000000"),
    setcase("lenet_on_synthetic", "data.dataset=synthetic' --set 'model.arch=lenet"),
    setcase("natural_on_fashion", "data.partition=natural"),
    setcase("groups_without_groups", "data.partition=groups"),
    setcase("groups_bad_syntax", "data.partition=groups' --set 'data.label_groups=medical-0-4"),
    setcase("groups_overlapping_labels", "data.partition=groups' --set 'data.label_groups=a:0-5:4; b:5-9:4"),
    setcase("groups_worker_count", "data.partition=groups' --set 'data.label_groups=a:0-4:2; b:5-9:2"),
    setcase("labels_per_worker_above_10", "data.partition=labels' --set 'data.labels_per_worker=11"),
    setcase("labels_assignment_unknown", "data.partition=labels' --set 'data.labels_assignment=uneven"),
    setcase("feature_noise_negative", "data.feature_noise=-0.1"),
    setcase("feature_noise_test_copies_too_many", "data.feature_noise=0.1' --set 'cluster.workers=16"),
    setcase("feature_noise_on_qa", "model.arch=transformer' --set 'data.dataset=qa' --set 'data.feature_noise=0.1"),
    setcase("transformer_on_images", "model.arch=transformer"),
    setcase("qa_with_mlp", "data.dataset=qa"),
    setcase("transformer_heads_not_dividing", "model.arch=transformer' --set 'data.dataset=qa' --set "
            "'transformer.heads=3"),
    setcase("lora_unknown_target", "model.arch=transformer' --set 'data.dataset=qa' --set 'lora.rank=4' --set "
            "'lora.targets=q,w"),
    setcase("lora_rank_not_low", "model.arch=transformer' --set 'data.dataset=qa' --set 'lora.rank=64"),
    setcase("rotary_odd_head_width", "model.arch=transformer' --set 'data.dataset=qa' --set 'transformer.dim=18' "
            "--set 'transformer.heads=2"),
    setcase("transformer_positions_unknown", "model.arch=transformer' --set 'data.dataset=qa' --set "
            "'transformer.positions=sinusoidal"),
    setcase("transformer_base_missing", "model.arch=transformer' --set 'data.dataset=qa' --set "
            "'transformer.base=/nonexistent/model.bin"),
    setcase("qa_natural_partition", "model.arch=transformer' --set 'data.dataset=qa' --set 'data.partition=natural"),
    setcase("fl_lr_decay_zero", "training.strategy=federated' --set 'fl.lr_decay=0"),
    setcase("fl_lr_decay_above_one", "training.strategy=federated' --set 'fl.lr_decay=1.5"),
    setcase("fl_clients_above_workers", "training.strategy=federated' --set 'fl.clients_per_round=99"),
    setcase("fl_prox_mu_without_fedprox", "training.strategy=federated' --set 'fl.prox_mu=0.1"),
    setcase("fl_no_local_work", "training.strategy=federated' --set 'fl.local_epochs=0"),
    setcase("fl_adam_clients", "training.strategy=federated' --set 'training.optimizer=adam"),
    setcase("fl_nesterov", "training.strategy=federated' --set 'training.nesterov=true"),
    setcase("fl_decay", "training.strategy=federated' --set 'training.decay=cosine"),
    setcase("fl_steps_by_client_count", "training.strategy=federated' --set 'fl.local_steps_by_client=1,2"),
    setcase("fl_steps_by_client_zero", "training.strategy=federated' --set 'cluster.workers=2' --set 'fl.local_steps_by_client=1,0"),
    setcase("fl_partial_one_epoch", "training.strategy=federated' --set 'fl.straggler_fraction=0.5' --set 'fl.straggler_policy=partial"),
    setcase("fl_trace_bad", "training.strategy=federated' --set 'fl.availability_trace=3 0s to 10s"),
    setcase("fl_trace_overlap", "training.strategy=federated' --set 'fl.availability_trace=3: 0s to 10s, 5s to 20s"),
    setcase("fl_secagg_with_compression", "training.strategy=federated' --set 'fl.secure_aggregation=true' --set 'compression.kind=topk"),
    setcase("ps_bound_with_softsync", "training.strategy=async-ps' --set 'ps.staleness_bound=2' --set 'ps.gradients_per_update=2"),
    setcase("ps_link_failure", "training.strategy=async-ps' --set 'faults.events=link 1 down at 1ms"),
    setcase("ps_servers_above_tensors", "training.strategy=async-ps' --set 'ps.servers=64"),
    setcase("local_sgd_with_faults", "training.strategy=local' --set 'faults.events=worker 1 down at 1ms"),
    setcase("compression_majority_vote_ps", "training.strategy=async-ps' --set 'compression.kind=sign' --set 'compression.majority_vote=true"),
    setcase("compression_predivide_fl", "training.strategy=federated' --set 'compression.kind=fp16' --set 'compression.predivide=true"),
    setcase("compression_downloads_sync", "compression.kind=topk' --set 'compression.downloads=true"),
    setcase("compression_error_feedback_without_kind", "compression.error_feedback=true"),
    setcase("compression_momentum_twice", "compression.kind=topk' --set 'compression.momentum_correction=0.9' --set 'training.momentum=0.9"),
    setcase("compression_loss_scaling", "compression.kind=topk' --set 'precision.loss_scaling=dynamic"),
    setcase("compression_with_faults", "compression.kind=topk' --set 'faults.events=worker 1 down at 1ms"),
    setcase("compression_ratio_for_sign_strict", "compression.kind=sign' --set 'compression.ratio=0.1", CHECK + " --strict"),
    setcase("compression_rank_zero", "compression.kind=powersgd' --set 'compression.rank=0"),
    setcase("compression_ratio_zero", "compression.kind=topk' --set 'compression.ratio=0"),
    setcase("torus_wrong_size", "cluster.topology=torus' --set 'cluster.torus_dims=3,3"),
    setcase("torus_for_ps_servers", "cluster.topology=torus' --set 'cluster.torus_dims=2,4' --set 'training.strategy=async-ps"),
    setcase("fat_tree_levels", "cluster.topology=fat-tree' --set 'cluster.fat_tree_levels=7"),
    setcase("dragonfly_links_count", "cluster.topology=dragonfly' --set 'cluster.dragonfly_links=1,1"),
    setcase("two_sites_without_wan", "cluster.topology=two-sites"),
    setcase("two_sites_bad_split", "cluster.topology=two-sites' --set 'cluster.wan_profile=wan-10g' --set 'cluster.site_nodes=3,3"),
    setcase("multi_gpu_without_intra_fabric", "cluster.gpus_per_node=4"),
    setcase("groups_bad_syntax_cluster", "cluster.groups=a100:4"),
    setcase("groups_unknown_gpu", "cluster.groups=a:4:no-such-gpu; b:4:v100-32gb"),
    setcase("groups_duplicate_names", "cluster.groups=a:4:a100-40gb; a:4:v100-32gb"),
    setcase("slow_worker_missing", "stragglers.slow_workers=3, 8-11"),
    setcase("slow_both_ways", "stragglers.slow_workers=1' --set 'stragglers.slow_fraction=0.5"),
    setcase("slow_fraction_rounds_to_none", "stragglers.slow_fraction=0.01"),
    setcase("background_bad_level", "background.link_profile=worker3: 0s 100%, 0.5s fast"),
    setcase("background_flow_bad", "background.flows=worker 1 to worker 1 at 1ms"),
    setcase("fault_up_before_down", "faults.events=node 3 down at 10s up at 5s"),
    setcase("fault_bad_time", "faults.events=link 5 down at soon"),
    setcase("fault_unknown_target", "faults.events=switch 1 down at 1s"),
    setcase("fault_worker_missing", "faults.events=worker 99 down at 1s"),
    setcase("gpu_half_power", "gpu.power_idle=0W' --set 'gpu.power_busy=300W"),
    setcase("gpu_idle_above_busy", "gpu.power_idle=500W' --set 'gpu.power_busy=300W"),
    setcase("gpu_price_half", "gpu.price_low=1' --set 'gpu.price_high=0"),
    setcase("gpu_price_inverted", "gpu.price_low=5' --set 'gpu.price_high=1"),
    setcase("fabric_tcp_window_on_rdma", "fabric.tcp_window=4MiB"),
    setcase("fabric_protocol_bad", "fabric.protocol=carrier-pigeon"),
    setcase("collective_algorithm_key_bad", "collective.algorithm=butterfly"),
    # (compute.device = cuda is not here: its message depends on the machine, with or without CUDA.)
]

# ---- profiles ---------------------------------------------------------------------------------------------
GPU_OK = "[gpu]\\nname = T\\npeak_fp32 = 1TFLOPS\\npeak_tf32 = 1TFLOPS\\npeak_bf16 = 1TFLOPS\\nmemory = 1GB\\nefficiency = 0.5\\n"
CASES += [
    setcase("gpu_profile_unknown", "gpu.profile=no-such-gpu"),
    setcase("fabric_profile_unknown", "fabric.profile=ib-hdr-2000"),
    setcase("gpu_profile_path_missing", "gpu.profile={dir}/absent.ini"),
    case("gpu_profile_lacks_field", CHECK + " --set gpu.profile={dir}/p.ini", {"p.ini": GPU_OK.replace("peak_fp32 = 1TFLOPS\\n", "")}),
    case("gpu_profile_wrong_section", CHECK + " --set gpu.profile={dir}/p.ini", {"p.ini": GPU_OK.replace("[gpu]", "[fabric]")}),
    case("gpu_profile_unknown_key", CHECK + " --set gpu.profile={dir}/p.ini", {"p.ini": GPU_OK + "cores = 9\\n"}),
    case("gpu_profile_names_profile", CHECK + " --set gpu.profile={dir}/p.ini", {"p.ini": GPU_OK + "profile = a100-40gb\\n"}),
    case("gpu_profile_bad_value", CHECK + " --set gpu.profile={dir}/p.ini", {"p.ini": GPU_OK.replace("0.5", "2")}),
    case("gpu_profile_huge_memory", CHECK + " --set gpu.profile={dir}/p.ini", {"p.ini": GPU_OK.replace("1GB", "1e40B")}),
    case("gpu_profile_cr_only", CHECK + " --set gpu.profile={dir}/p.ini", {"p.ini": GPU_OK.replace("\\n", "\\r") + "\\c"}),
    case("gpu_profile_nul", CHECK + " --set gpu.profile={dir}/p.ini", {"p.ini": GPU_OK.replace("name = T", "name = T\\x00X")}),
    case("gpu_profile_is_folder", CHECK + " --set gpu.profile={dir}"),
    case("profiles_command_bad_folder", "profiles {dir}/absent"),
    case("profiles_command_bad_file", "profiles {dir}", {"gpu/bad.ini": "[gpu]\\nname = X\\n", "fabric/f.ini": "[fabric]\\nname = F\\n"}),
]

# ---- datasets ---------------------------------------------------------------------------------------------
# A valid IDX label file of two labels, uncompressed (the reader takes a file that is not gzip'ed as it is).
LABELS = "\\x00\\x00\\x08\\x01\\x00\\x00\\x00\\x02\\x03\\x04\\c"


def data_case(name, files, extra=""):
    """A data folder holding the given training images file and a valid training label file."""
    files = dict(files)
    files.setdefault("train-labels-idx1-ubyte.gz", LABELS)
    return case(name, CHECK + " --set data.path={dir}" + extra, files)


CASES += [
    case("data_folder_missing", CHECK + " --set data.path={dir}/absent"),
    data_case("data_folder_empty", {}),
    data_case("data_file_empty", {"train-images-idx3-ubyte.gz": "\\c"}),
    data_case("data_file_not_gzip", {"train-images-idx3-ubyte.gz": "not gzip at all\\n"}),
    data_case("data_images_header_only", {"train-images-idx3-ubyte.gz": "\\x00\\x00\\x08\\x03\\x00\\x00\\x00\\x02\\x00\\x00\\x00\\x1c\\x00\\x00\\x00\\x1c\\c"}),
    data_case("data_images_absurd_count", {"train-images-idx3-ubyte.gz": "\\x00\\x00\\x08\\x03\\xff\\xff\\xff\\xff\\x00\\x00\\x00\\x1c\\x00\\x00\\x00\\x1c\\c"}),
    data_case("data_images_wrong_dims", {"train-images-idx3-ubyte.gz": "\\x00\\x00\\x08\\x01\\x00\\x00\\x00\\x02\\x01\\x02\\c"}),
    data_case("data_file_truncated_gzip", {"train-images-idx3-ubyte.gz": "\\x1f\\x8b\\x08\\x00\\x00\\x00\\x00\\x00\\x00\\x03\\c"}),
    case("data_path_is_a_file", CHECK + " --set data.path={quickstart}"),
    setcase("synthetic_devices_vs_workers", "data.dataset=synthetic' --set 'data.partition=natural' --set 'data.synthetic_devices=3"),
]

# ---- command line -----------------------------------------------------------------------------------------
CASES += [
    case("no_command", ""),
    case("unknown_command", "rnu " + QUICK),
    case("run_without_scenario", "run"),
    case("check_without_scenario", "check"),
    case("unknown_flag", "run " + QUICK + " --fast"),
    case("set_without_equals", CHECK + " --set training.lr"),
    case("set_without_section", CHECK + " --set lr=0.1"),
    case("set_unknown_key", CHECK + " --set training.nosuchkey=1"),
    case("set_empty", CHECK + " --set ''"),
    case("out_is_a_file", "run " + QUICK + " --out {quickstart}"),
    case("out_unwritable", "run " + QUICK + " --out /proc/dtsim-cannot"),
    case("strict_with_ignored_key", "run " + QUICK + " --strict --set ps.servers=2"),
    case("keys_bad_format", "keys --format html"),
    case("two_scenarios", "check " + QUICK + " " + QUICK),
    case("collective_bad_ranks", "collective --ranks zero"),
    case("collective_zero_ranks", "collective --ranks 0"),
    case("collective_sizes_inverted", "collective --sizes 1MiB:8B"),
    case("collective_sizes_zero", "collective --sizes 0B:8B"),
    case("collective_sizes_huge", "collective --sizes 8B:1e30B"),
    case("collective_bad_algorithm", "collective --algorithm butterfly"),
    case("collective_bad_op", "collective --op scatter-gather"),
    case("collective_bad_topology", "collective --topology ring"),
    case("collective_bad_profile", "collective --profile ib-hdr-2000"),
    case("collective_bad_fidelity", "collective --fidelity exact"),
    case("collective_bad_iters", "collective --iters -1"),
    case("collective_bad_set", "collective --set cluster.workers=0"),
    case("collective_unknown_flag", "collective --fast"),
    # More NICs than GPUs (bonded per GPU) and PCIe switches between GPUs and NICs.
    case("nics_uneven_per_gpu", "collective --ranks 4 --gpus-per-node 2 --set cluster.intra_node_fabric=nvlink3-nvswitch"
         " --set cluster.nics_per_node=3"),
    case("nics_bonded_on_rails", "collective --ranks 8 --topology fat-tree --set cluster.nics_per_node=4"
         " --set cluster.rail_optimized=true"),
    case("nics_bonded_mixed_on_fat_tree", "collective --ranks 6 --topology fat-tree --set cluster.nics_per_node=4"
         " --set cluster.intra_node_fabric=nvlink3-nvswitch --set 'cluster.groups=a:2:a100-40gb:1; b:1:a100-40gb:4'"),
    setcase("pcie_switch_unknown", "cluster.pcie_switch=pcie9-x16"),
    case("pcie_switch_uneven", "collective --ranks 16 --gpus-per-node 8 --set cluster.intra_node_fabric=nvlink3-nvswitch"
         " --set cluster.pcie_switch=pcie4-x16 --set cluster.gpus_per_pcie_switch=3"),
    case("pcie_switch_splits_a_nic", "collective --ranks 16 --gpus-per-node 8 --set cluster.intra_node_fabric=nvlink3-nvswitch"
         " --set cluster.nics_per_node=2 --set cluster.pcie_switch=pcie4-x16 --set cluster.gpus_per_pcie_switch=2"),
    case("strict_with_pcie_key_alone", "run " + QUICK + " --strict --set cluster.gpus_per_pcie_switch=4"),
    # dtsim sweep, collect and compare: refused before any run starts or any file is written.
    case("sweep_vary_without_values", "sweep " + QUICK + " --vary training.lr --out {dir}/sw"),
    case("sweep_vary_empty_value", "sweep " + QUICK + " --vary training.lr=0.1,,0.2 --out {dir}/sw"),
    case("sweep_vary_unknown_key", "sweep " + QUICK + " --vary training.lrr=0.1,0.2 --out {dir}/sw"),
    case("sweep_vary_bad_value", "sweep " + QUICK + " --vary training.lr=0.1,-1 --out {dir}/sw"),
    case("sweep_vary_repeated_value", "sweep " + QUICK + " --vary training.lr=0.1,0.1 --out {dir}/sw"),
    case("sweep_vary_without_effect", "sweep " + QUICK + " --vary ps.servers=1,2 --out {dir}/sw"),
    case("sweep_seeds_and_vary_seed", "sweep " + QUICK + " --seeds 2 --vary run.seed=1,2 --out {dir}/sw"),
    case("sweep_set_and_vary", "sweep " + QUICK + " --vary training.lr=0.1,0.2 --set training.lr=0.3 --out {dir}/sw"),
    case("sweep_nothing_varied", "sweep " + QUICK + " --out {dir}/sw"),
    case("sweep_bad_jobs", "sweep " + QUICK + " --seeds 2 --jobs 0 --out {dir}/sw"),
    case("sweep_folder_collision", "sweep " + QUICK + " --vary data.dataset=a/b,a_b --out {dir}/sw"),
    case("sweep_task_with_slurm", "sweep " + QUICK + " --seeds 2 --task 0 --slurm {dir}/a.sh --out {dir}/sw"),
    case("collect_not_a_sweep", "collect {dir}"),
    case("compare_not_a_sweep", "compare {dir}"),
    # dtsim workload: flags and catalog files.
    case("workload_unknown", "workload llama-8b"),
    case("workload_bad_zero", "workload llama-7b --zero 5"),
    case("workload_bad_gpus", "workload llama-7b --gpus 0"),
    case("workload_bad_precision", "workload llama-7b --precision fp8"),
    case("workload_bad_gpu", "workload llama-7b --gpu a100"),
    case("workload_flag_without_name", "workload --zero 2"),
    case("run_model_does_not_fit", CHECK + " --set gpu.memory=3MB"),
    case("proxy_unknown_workload", CHECK + " --set workload.name=llama-13b --set workload.proxy=true"),
    case("zero_with_local_sgd", CHECK + " --set training.strategy=local --set sync.zero_stage=1"),
    case("zero_with_compression", CHECK + " --set sync.zero_stage=2 --set compression.kind=topk"),
    case("fabric_price_half", CHECK + " --set fabric.price_low=2"),
    case("fabric_price_currency", CHECK + " --set fabric.price_low=2 --set fabric.price_high=3"
         " --set fabric.price_currency=USD"),
    case("fabric_price_unpriced_gpu", CHECK + " --set fabric.price_low=2 --set fabric.price_high=3"
         " --set fabric.price_currency=CNY --set gpu.price_low=0 --set gpu.price_high=0 --set gpu.price_currency="),
    case("zero_stage_three_accumulation", CHECK + " --set sync.zero_stage=3 --set sync.accumulation_steps=4"),
    case("zero_stage_four", "check {src}/scenarios/workload_llama2_70b.ini --set sync.zero_stage=4"),
    case("workload_simulate_zero_set", "workload llama-7b --simulate --set sync.zero_stage=1"),
    case("workload_run_local_sgd", "check {src}/scenarios/workload_resnet50.ini --set training.strategy=local"
         " --set local.local_steps=1"),
    case("workload_run_fl_epochs", "check {src}/scenarios/workload_resnet50.ini --set training.strategy=federated"),
    case("workload_run_ps_shards", "check {src}/scenarios/workload_llama_7b_lora.ini --set training.strategy=async-ps"
         " --set ps.servers=65"),
    case("workload_run_unknown_name", "check {src}/scenarios/workload_resnet50.ini --set workload.name=resnet-50"),
    case("workload_run_groups", "check {src}/scenarios/workload_resnet50.ini --set cluster.workers=16"
         " --set 'cluster.groups=a:1:a100-80gb:8; b:1:h100-80gb:8'"),
    case("workload_run_strict_lr", "check {src}/scenarios/workload_resnet50.ini --strict --set training.lr=0.1"),
    case("workload_file_not_json", "workload {dir}/w.json", {"w.json": "name = w\n"}),
    case("workload_file_name_mismatch", "workload {dir}/w.json",
         {"w.json": '{"name": "v", "title": "t", "architecture": "resnet", "sources": ["s"],\n'
                    ' "resnet": {"image": 32, "classes": 10, "stages": [{"blocks": 1, "width": 4}]}}\n'}),
    case("workload_file_bad_heads", "workload {dir}/w.json",
         {"w.json": '{"name": "w", "title": "t", "architecture": "transformer", "sources": ["s"],\n'
                    ' "transformer": {"layers": 2, "hidden": 100, "heads": 3, "ffn": 400, "vocab": 10,\n'
                    '  "sequence": 8, "feed_forward": "gelu", "norm": "layernorm"}}\n'}),
    case("workload_file_unknown_field", "workload {dir}/w.json",
         {"w.json": '{"name": "w", "title": "t", "architecture": "resnet", "sources": ["s"],\n'
                    ' "resnet": {"image": 32, "classes": 10, "stages": [{"blocks": 1, "widht": 4}]}}\n'}),
]


# ---- issue 57: the second pass (silent acceptances, unclear messages, wrong exit codes) ---------------------
def workload_json(layers="2", extra="", title="t"):
    """A small transformer workload file named w; `extra` goes inside "transformer" after "layers"."""
    return ('{"name": "w", "title": "' + title + '", "architecture": "transformer", "sources": ["s"],\n'
            ' "transformer": {"layers": ' + layers + ', ' + extra + '"hidden": 64, "heads": 4, "ffn": 256,\n'
            '  "vocab": 100, "sequence": 8, "feed_forward": "gelu", "norm": "layernorm"}}\n')


QA = "model.arch=transformer' --set 'data.dataset=qa' --set '"
CASES += [
    s("empty_scenario_file", "\\c"),
    s("comments_only_scenario", "# only a comment\\n[training]\\n"),
    case("empty_scenario_file_run", "run {dir}/s.ini --out {dir}/out", {"s.ini": "\\c"}),
    s("hash_glued_to_a_value", "[run]\\nname = base#1\\n"),
    setcase("nesterov_without_momentum_on_the_command_line", "training.nesterov=true' --set 'training.momentum=0"),
    setcase("accumulation_past_the_data", "sync.accumulation_steps=100000"),
    setcase("global_batch_past_an_int", "cluster.workers=65536' --set 'training.batch_per_worker=32768"),
    setcase("global_batch_wrapping_to_zero",
            "cluster.workers=2' --set 'training.batch_per_worker=32768' --set 'sync.accumulation_steps=65536"),
    case("gpu_profile_lacks_power_busy", CHECK + " --set gpu.profile={dir}/p.ini", {"p.ini": GPU_OK + "power_idle = 50W\\n"}),
    case("gpu_profile_lacks_price_high", CHECK + " --set gpu.profile={dir}/p.ini",
         {"p.ini": GPU_OK + "price_low = 1\\nprice_currency = CNY\\n"}),
    setcase("set_key_of_an_unknown_section", "foo.bar=1"),
    case("vary_key_of_an_unknown_section", "sweep " + QUICK + " --vary foo.bar=1,2 --out {dir}/sw"),
    case("fabric_profile_key_of_another_section", CHECK + " --set fabric.profile={dir}/f.ini",
         {"f.ini": "[fabric]\\nname = F\\nffn = 2\\n"}),
    case("collective_sizes_just_past_the_limit", "collective --sizes 9PB"),
    case("collect_missing_folder", "collect {dir}/nope"),
    case("compare_missing_folder", "compare {dir}/nope"),
    case("compare_a_file", "compare {quickstart}"),
    setcase("transformer_base_is_a_device", QA + "transformer.base=/dev/zero"),
    setcase("transformer_base_is_a_folder", QA + "transformer.base={dir}"),
    case("unknown_command_with_help", "bogus --help"),
    case("version_with_an_argument", "--version extra"),
    case("collective_flag_prefix", "collective --r 4"),
    case("run_flag_prefix", "run " + QUICK + " --str"),
    case("sweep_flag_prefix", "sweep " + QUICK + " --se 2 --out {dir}/sw"),
    case("sweep_vary_run_name", "sweep " + QUICK + " --vary run.name=x,y --out {dir}/sw"),
    case("sweep_vary_bad_seed", "sweep " + QUICK + " --vary run.seed=1,-2 --out {dir}/sw"),
    s("zero_on_one_worker_strict", "[cluster]\\nworkers = 1\\n[sync]\\nzero_stage = 3\\n", "check --strict {dir}/s.ini"),
    case("workload_file_layers_negative", "workload {dir}/w.json", {"w.json": workload_json(layers="-4")}),
    case("workload_file_layers_zero", "workload {dir}/w.json", {"w.json": workload_json(layers="0")}),
    case("workload_file_layers_twice", "workload {dir}/w.json", {"w.json": workload_json(extra='"layers": 3, ')}),
    case("workload_file_title_escape", "workload {dir}/w.json", {"w.json": workload_json(title="a\\\\u001b[2Jb")}),
    case("workload_file_title_too_long", "workload {dir}/w.json", {"w.json": workload_json(title="T" * 1500)}),
    case("workload_file_is_a_folder", CHECK + " --set workload.name={dir}/w.json", {"w.json/x": "\\c"}),
    case("workload_dir_missing", CHECK + " --set workload.name=resnet50", env="DTSIM_WORKLOAD_DIR={dir}/nonexistent"),
    case("workload_dir_missing_listing", "workload", env="DTSIM_WORKLOAD_DIR={dir}/nonexistent"),
    case("workload_dir_is_a_file", "workload resnet50", env="DTSIM_WORKLOAD_DIR={quickstart}"),
    case("profile_dir_missing", CHECK, env="DTSIM_PROFILE_DIR={dir}/nonexistent"),
    setcase("profile_name_too_long_for_a_file", "gpu.profile=" + "a" * 300),
    case("validate_scenarios_name_too_long", "validate --quick --only mixed-precision --out {dir}/v --scenarios {dir}/" + "a" * 300),
    case("unknown_command_with_arguments", "bogus a b"),
    case("partition_file_number_overflow", CHECK + " --set data.partition=file --set data.partition_file={dir}/p.json",
         {"p.json": '{"shards": [[1e999]]}\\n'}),
    case("partition_file_member_twice_deep", CHECK + " --set data.partition=file --set data.partition_file={dir}/p.json",
         {"p.json": '{"shards": [[0], [1], [2], [3], [4], [5], [6], [7]], "note": {"by": "a", "by": "b"}}\\n'}),
]


def run_case(binary, c, tmp):
    folder = os.path.join(tmp, c["name"])
    os.makedirs(folder)
    for name, text in c["files"].items():
        os.makedirs(os.path.dirname(os.path.join(folder, name)), exist_ok=True)
        # A case of CASES holds its files as escaped text; a case reread from cases.txt, as bytes.
        data = text if isinstance(text, bytes) else text.replace("\\c", "").encode("latin-1").decode("unicode_escape").encode("latin-1")
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
    def substitute(text):
        return text.replace("{dir}", folder).replace("{src}", SRC).replace(
            "{quickstart}", os.path.join(SRC, "scenarios/quickstart.ini"))
    args = substitute(c["args"])
    env = ("env " + substitute(c["env"]) + " ") if c["env"] else ""
    p = subprocess.run(env + "timeout 120 " + binary + " " + args, shell=True, cwd=folder, capture_output=True)
    first = p.stderr.decode("utf-8", errors="backslashreplace").split("\n")[0]
    first = first.replace(folder, "{dir}").replace(os.path.join(SRC, "scenarios/quickstart.ini"), "{quickstart}")
    first = first.replace(SRC, "{src}")
    return p.returncode, first


def print_case(binary, c, tmp):
    """Runs a case of CASES and prints it in the format of cases.txt."""
    code, first = run_case(binary, c, tmp)
    print()
    print("== " + c["name"])
    for name, text in c["files"].items():
        print("file " + name + " <<")
        body = text
        if body.endswith("\\n"):
            body = body[:-2]
        print(body.replace("\\n", "\n"))
        print(">>")
    if c["env"]:
        print("env: " + c["env"])
    print("args: " + c["args"])
    print("exit: " + str(code))
    print("stderr: " + first)


def main():
    binary = os.path.abspath(sys.argv[1])
    if len(sys.argv) == 4 and sys.argv[2] == "--rerun":
        tmp = tempfile.mkdtemp(prefix="dtsim_corpus_rerun_")
        try:
            text, names = rerun_corpus(sys.argv[3], lambda case: run_case(binary, case, tmp))
            print(text)
            for c in CASES:
                if c["name"] not in names:
                    print_case(binary, c, tmp)
        finally:
            shutil.rmtree(tmp)
        return
    tmp = tempfile.mkdtemp(prefix="dtsim_corpus_record_")
    try:
        print("# The bad-input corpus: see tests/corpus/corpus_test.cpp for the format and")
        print("# tests/corpus/record_cases.py for how it is recorded and reviewed.")
        for c in CASES:
            print_case(binary, c, tmp)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
