#!/usr/bin/env bash
# check-metrics-identical.sh: proves that a refactor keeps dtsim's behaviour, by showing that every scenario in
# scenarios/*.ini writes a byte-identical metrics.csv before and after it.
#
# Usage (a plain shell script: no CTest, no Makefile target, run it from anywhere inside the repository):
#
#   scripts/check-metrics-identical.sh                    # base 9579d03 against the working tree, full scenarios
#   scripts/check-metrics-identical.sh --quick            # the same, every run cut short (a few minutes on 2 cores)
#   scripts/check-metrics-identical.sh --base HEAD~3 --quick --jobs 4
#   scripts/check-metrics-identical.sh --quick --keep /tmp/identity   # keep worktree, builds and outputs there
#
#   --base REV   the revision that defines "before" (default: $DEFAULT_BASE below); resolved with git rev-parse
#                and built in a temporary git worktree. 0ef3fa7 was the base of the sim/ folders refactor;
#                9579d03 added metrics.csv's last column (nonfinite), so later refactors compare against it
#   --quick      cap every run: training.max_steps for step-based strategies, fl.rounds for federated ones
#                (see QUICK_* below). A shorter run is a prefix of the same code paths, so identical output
#                still proves identical behaviour of everything it touched. Without --quick, full scenarios.
#   --jobs N     parallel compile jobs, and how many dtsim runs go at once (default: nproc)
#   --keep DIR   work in DIR (worktree, base build, outputs, logs) and leave it there afterwards;
#                without it everything goes to a mktemp folder under ${TMPDIR:-/tmp}, removed on exit
#   (hidden) --head REV   build REV in a second worktree instead of the working tree, e.g. when the working
#                tree is mid-refactor and does not compile: --base X --head X checks the harness itself
#
# Both sides are built the same way: Release, -DDTSIM_CUDA=OFF -DDTSIM_WERROR=OFF, only the dtsim target,
# ccache as compiler launcher when it is installed. The working tree is built into build-identity/ of the
# repository when .gitignore ignores that folder, otherwise into the temporary folder (never into build/).
# Both binaries run the working tree's scenarios/*.ini with the same flags:
#   dtsim run FILE --out DIR --quiet [--set KEY=VALUE...]
# and each pair of metrics.csv is compared with cmp. One line per scenario: same / DIFFERENT / FAILED.
#
# Exit status: 0 every scenario same; 1 at least one DIFFERENT or FAILED; 2 bad usage; 3 a build failed.
#
# Measured cost of each full scenario, one run at a time on the 2-core development machine (2025-12-01), with the
# Release/CUDA-off dtsim of 0ef3fa7 (build/dtsim was not built yet). Other builds shared both cores, so "wall"
# is inflated 2-5x; "cpu" (user+system; dtsim is single-threaded) is what a run takes on an idle core:
#   scenario               wall s   cpu s     scenario               wall s   cpu s
#   two_sites                24.5     5.3     sign_error_feedback      64.9    16.1
#   hgx_rails                24.6     4.7     qsgd_4bit               142.3    36.6
#   mixed_cluster            59.2     9.3     powersgd                 43.6    15.4
#   sync_vs_async           147.2    25.9     fedprox_synthetic        23.5     9.4
#   quickstart               31.3     7.6     centralized_mlp          53.2    19.6
#   topk_error_feedback     107.0    25.9     centralized_lenet       295.6   117.4
#   centralized_cnn        ~3664    ~822      (8 x its first epoch: 458 s wall, 102.8 s cpu)
#   sum                    ~4681   ~1115      -> a full run is ~19 min of cpu per side: ~19-20 min with
#                                                --jobs 2 on an idle 2-core machine (+ builds), ~37 min serial
# --quick (training.max_steps=40, fl.rounds=3): 131 s for all 26 runs with --jobs 2 on the same busy machine,
# 145 s in all with both builds up to date; a cold build of one side took ~9 min there (ccache speeds reruns).
set -euo pipefail

DEFAULT_BASE=9579d03
QUICK_STEPS=40    # --quick: training.max_steps for every strategy except federated
QUICK_ROUNDS=3    # --quick: fl.rounds for training.strategy = federated

usage() { sed -n '/^# Usage/,/^# Exit status/p' "$0" | sed 's/^# \{0,1\}//'; }
die_usage() { echo "check-metrics-identical: $*" >&2; echo "run with --help for the usage" >&2; exit 2; }

base_rev=$DEFAULT_BASE
head_rev=""
quick=0
jobs=$(nproc 2>/dev/null || echo 2)
keep_dir=""
while (($#)); do
  case $1 in
    --base) (($# >= 2)) || die_usage "--base needs a revision"; base_rev=$2; shift 2 ;;
    --base=*) base_rev=${1#*=}; shift ;;
    --head) (($# >= 2)) || die_usage "--head needs a revision"; head_rev=$2; shift 2 ;;
    --head=*) head_rev=${1#*=}; shift ;;
    --quick) quick=1; shift ;;
    --jobs|-j) (($# >= 2)) || die_usage "--jobs needs a number"; jobs=$2; shift 2 ;;
    --jobs=*) jobs=${1#*=}; shift ;;
    --keep) (($# >= 2)) || die_usage "--keep needs a folder"; keep_dir=$2; shift 2 ;;
    --keep=*) keep_dir=${1#*=}; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die_usage "unknown argument '$1'" ;;
  esac
done
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die_usage "--jobs must be a positive integer (got '$jobs')"

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(git -C "$script_dir" rev-parse --show-toplevel)
cd "$repo"

resolve() {
  git rev-parse --verify --quiet "$1^{commit}" || { echo "check-metrics-identical: unknown revision '$1'" >&2; exit 2; }
}
base_sha=$(resolve "$base_rev")
head_sha=""
[[ -n $head_rev ]] && head_sha=$(resolve "$head_rev")

shopt -s nullglob
scenarios=("$repo"/scenarios/*.ini)
shopt -u nullglob
((${#scenarios[@]})) || { echo "check-metrics-identical: no scenarios/*.ini in $repo" >&2; exit 2; }

# ---- work folder and cleanup --------------------------------------------------------------------------------
if [[ -n $keep_dir ]]; then
  mkdir -p "$keep_dir"
  work=$(cd "$keep_dir" && pwd)
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/dtsim-identity.XXXXXX")
fi
worktrees=()
run_pids=()
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  local pid
  for pid in "${run_pids[@]}"; do pkill -TERM -P "$pid" 2>/dev/null || true; kill "$pid" 2>/dev/null || true; done
  if [[ -z $keep_dir ]]; then
    local wt
    for wt in "${worktrees[@]}"; do git -C "$repo" worktree remove --force "$wt" >/dev/null 2>&1 || true; done
    rm -rf "$work"
    git -C "$repo" worktree prune >/dev/null 2>&1 || true
  else
    echo "kept: $work (remove its worktrees with: git worktree remove --force $work/src-*)"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

seconds_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f\n", b - a }'; }

# ---- builds -------------------------------------------------------------------------------------------------
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

# build_dtsim SRC BUILD_DIR LABEL: configures and builds SRC's dtsim target; prints the log's tail on failure.
build_dtsim() {
  local src=$1 dir=$2 label=$3 t0=$EPOCHREALTIME
  mkdir -p "$dir"
  echo "building $label ($src -> $dir) ..."
  if ! cmake -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DDTSIM_CUDA=OFF -DDTSIM_WERROR=OFF "${launcher[@]}" \
       >"$dir/identity-configure.log" 2>&1; then
    tail -n 30 "$dir/identity-configure.log" >&2
    echo "check-metrics-identical: configuring $label failed (log: $dir/identity-configure.log)" >&2
    return 1
  fi
  # Relative paths below the common parent let ccache reuse objects between runs of this script.
  if ! CCACHE_BASEDIR=$(dirname "$src") cmake --build "$dir" --target dtsim -j "$jobs" >"$dir/identity-build.log" 2>&1; then
    grep -E 'error|Error' "$dir/identity-build.log" | head -n 20 >&2 || true
    tail -n 15 "$dir/identity-build.log" >&2
    echo "check-metrics-identical: building $label failed (log: $dir/identity-build.log)" >&2
    return 1
  fi
  printf '  %s built in %.0f s\n' "$label" "$(seconds_since "$t0")"
}

add_worktree() {  # add_worktree SHA NAME: checks SHA out in $work/src-NAME
  local path="$work/src-$2"
  worktrees+=("$path")
  # A clean worktree of SHA kept by an earlier --keep run is reused, so that its build is incremental.
  if [[ -d $path ]] && [[ $(git -C "$path" rev-parse HEAD 2>/dev/null) == "$1" ]] &&
     [[ -z $(git -C "$path" status --porcelain 2>/dev/null) ]]; then
    return 0
  fi
  [[ -d $path ]] && { git -C "$repo" worktree remove --force "$path" >/dev/null 2>&1 || rm -rf "$path"; }
  git -C "$repo" worktree prune >/dev/null 2>&1 || true
  git -C "$repo" worktree add --quiet --detach "$path" "$1"
}

add_worktree "$base_sha" base
build_dtsim "$work/src-base" "$work/build-base" "base ${base_sha:0:10}" || exit 3
# find_dtsim BUILD_DIR: the dtsim executable of a build folder (build/dtsim today; searched in case it moves).
find_dtsim() {
  if [[ -x $1/dtsim && -f $1/dtsim ]]; then echo "$1/dtsim"
  else find "$1" -type f -name dtsim -perm -u+x 2>/dev/null | head -n 1; fi
}
base_bin=$(find_dtsim "$work/build-base")

if [[ -n $head_sha ]]; then
  head_label="rev ${head_sha:0:10}"
  add_worktree "$head_sha" head
  build_dtsim "$work/src-head" "$work/build-head" "$head_label" || exit 3
  head_bin_dir="$work/build-head"
else
  head_label="working tree"
  if git -C "$repo" check-ignore -q build-identity/; then
    head_bin_dir="$repo/build-identity"   # ignored by git: kept between runs for incremental builds
  else
    head_bin_dir="$work/build-head"       # .gitignore does not cover build-identity/: stay out of the repository
  fi
  build_dtsim "$repo" "$head_bin_dir" "$head_label" ||
    { echo "hint: compare two revisions with --base REV --head REV while the working tree does not build" >&2; exit 3; }
fi
head_bin=$(find_dtsim "$head_bin_dir")
[[ -n $base_bin && -n $head_bin ]] || { echo "check-metrics-identical: dtsim binary not found after the build" >&2; exit 3; }

# ---- quick-mode overrides -----------------------------------------------------------------------------------
# A key is used only when both binaries list it in 'dtsim keys'; otherwise it is reported and dropped (both
# sides always get the same flags), and the scenarios it would have shortened run in full.
{ "$base_bin" keys || echo "  'dtsim keys' failed on base ${base_sha:0:10}" >&2; } | awk 'NR > 1 {print $1}' | sort -u >"$work/keys-base.txt"
{ "$head_bin" keys || echo "  'dtsim keys' failed on the $head_label" >&2; } | awk 'NR > 1 {print $1}' | sort -u >"$work/keys-head.txt"
key_usable() {
  local key=$1 ok=0
  grep -qxF "$key" "$work/keys-base.txt" || { echo "  quick: '$key' is not a key of base ${base_sha:0:10}; not used" >&2; ok=1; }
  grep -qxF "$key" "$work/keys-head.txt" || { echo "  quick: '$key' is not a key of the $head_label; not used" >&2; ok=1; }
  return $ok
}
steps_key=""
rounds_key=""
if ((quick)); then
  if key_usable training.max_steps; then steps_key=training.max_steps
  elif key_usable training.epochs; then steps_key=training.epochs; QUICK_STEPS=1
    echo "  quick: falling back to training.epochs=1 for step-based scenarios" >&2
  fi
  key_usable fl.rounds && rounds_key=fl.rounds
fi

# strategy_of FILE: training.strategy as written in the scenario (sync when absent, the key's default).
strategy_of() {
  awk -F= '
    /^[[:space:]]*\[/ { gsub(/[][[:space:]]/, ""); section = $0; next }
    section == "training" && $1 ~ /^[[:space:]]*strategy[[:space:]]*$/ { v = $2; sub(/[#;].*/, "", v); gsub(/[[:space:]]/, "", v); s = v }
    END { print (s == "" ? "sync" : s) }' "$1"
}

# flags_for FILE: prints the --set flags of FILE's runs, one per line (identical for both sides).
flags_for() {
  ((quick)) || return 0
  if [[ $(strategy_of "$1") == federated ]]; then
    if [[ -n $rounds_key ]]; then printf -- '--set\n%s=%s\n' "$rounds_key" "$QUICK_ROUNDS"
    else echo "  quick: $(basename "$1") runs in full (no usable rounds key)" >&2; fi
  else
    if [[ -n $steps_key ]]; then printf -- '--set\n%s=%s\n' "$steps_key" "$QUICK_STEPS"
    else echo "  quick: $(basename "$1") runs in full (no usable step key)" >&2; fi
  fi
}

# ---- runs ---------------------------------------------------------------------------------------------------
# run_one SIDE BIN FILE NAME: one dtsim run; leaves rc and wall seconds in $work/out/SIDE/NAME.{rc,wall}.
run_one() {
  local side=$1 bin=$2 file=$3 name=$4 t0 rc=0
  local dir="$work/out/$side/$name"
  rm -rf "$dir"; mkdir -p "$dir"
  local -a flags
  mapfile -t flags < <(flags_for "$file" 2>/dev/null)
  t0=$EPOCHREALTIME
  "$bin" run "$file" --out "$dir" --quiet "${flags[@]}" >"$dir.log" 2>&1 || rc=$?
  seconds_since "$t0" >"$dir.wall"
  echo "$rc" >"$dir.rc"
}

echo "base:  ${base_sha:0:10} ($(git -C "$repo" log -1 --format=%s "$base_sha" | cut -c1-70))"
echo "head:  $head_label${head_sha:+ ($(git -C "$repo" log -1 --format=%s "$head_sha" | cut -c1-70))}"
if ((quick)); then
  echo "mode:  quick (${steps_key:-no step cap}${steps_key:+=$QUICK_STEPS}, ${rounds_key:-no round cap}${rounds_key:+=$QUICK_ROUNDS})"
  for f in "${scenarios[@]}"; do flags_for "$f" >/dev/null; done   # report scenarios left uncapped, once
else
  echo "mode:  full scenarios"
fi
echo "runs:  ${#scenarios[@]} scenarios x 2 sides, $jobs at a time; outputs in $work/out"
echo

names=()
for f in "${scenarios[@]}"; do names+=("$(basename "$f" .ini)"); done
width=0
for n in "${names[@]}"; do ((${#n} > width)) && width=${#n}; done

different=0
printed=0
# print_ready: prints, in scenario order, every scenario whose two runs have both finished.
print_ready() {
  while ((printed < ${#names[@]})); do
    local n=${names[printed]} b="$work/out/base/${names[printed]}" h="$work/out/head/${names[printed]}"
    [[ -f $b.rc && -f $h.rc ]] || return 0
    local brc hrc verdict detail=""
    brc=$(<"$b.rc"); hrc=$(<"$h.rc")
    if ((brc != 0 || hrc != 0)); then
      if ((brc != 0 && hrc != 0)); then verdict="FAILED (exit $brc on base, $hrc on head)"
      elif ((brc != 0)); then verdict="FAILED (exit $brc on base)"
      else verdict="FAILED (exit $hrc on head)"; fi
      detail=$( { ((brc)) && sed 's/^/      base: /' "$b.log" | tail -n 3; ((hrc)) && sed 's/^/      head: /' "$h.log" | tail -n 3; } || true)
      different=1
    elif [[ ! -f $b/metrics.csv || ! -f $h/metrics.csv ]]; then
      verdict="FAILED (exit 0 but no metrics.csv)"; different=1
    elif cmp -s "$b/metrics.csv" "$h/metrics.csv"; then
      verdict="same ($(($(wc -l <"$b/metrics.csv") - 1)) rows)"
    else
      verdict="DIFFERENT"; different=1
      detail="      $(cmp "$b/metrics.csv" "$h/metrics.csv" 2>&1 | head -n 1)"
    fi
    printf '  %-*s  %-34s base %7.1f s   head %7.1f s\n' "$width" "$n" "$verdict" "$(<"$b.wall")" "$(<"$h.wall")"
    [[ -n $detail ]] && printf '%s\n' "$detail"
    printed=$((printed + 1))
  done
}

t_start=$EPOCHREALTIME
running=0
for i in "${!scenarios[@]}"; do
  for side in base head; do
    if ((running >= jobs)); then wait -n || true; running=$((running - 1)); print_ready; fi
    if [[ $side == base ]]; then run_one base "$base_bin" "${scenarios[i]}" "${names[i]}" &
    else run_one head "$head_bin" "${scenarios[i]}" "${names[i]}" & fi
    run_pids+=($!)
    running=$((running + 1))
  done
done
while ((running > 0)); do wait -n || true; running=$((running - 1)); print_ready; done
wait || true
print_ready
run_pids=()

echo
printf 'total run time %.0f s; ' "$(seconds_since "$t_start")"
if ((different)); then
  echo "metrics.csv NOT identical for every scenario (base ${base_sha:0:10} vs $head_label)"
  exit 1
fi
echo "metrics.csv identical for all ${#names[@]} scenarios (base ${base_sha:0:10} vs $head_label)"
