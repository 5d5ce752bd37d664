#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for testing `dtsim sweep --slurm` (make test-slurm).
#
#   scripts/slurm-localhost.sh start   # install the packages if missing, write slurm.conf, start the daemons
#   scripts/slurm-localhost.sh stop    # stop the daemons this script started
#
# Needs root and Debian 12's slurm-wlm 22.05. It does not need systemd or cgroups: the daemons fork on their own
# and are tracked by the pids recorded in $STATE. A munged that already answers is used and left running.
set -euo pipefail

STATE=${SLURM_LOCALHOST_STATE:-/run/dtsim-slurm}
CONF=/etc/slurm/slurm.conf
MARK="# written by dtsim scripts/slurm-localhost.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

die() { echo "slurm-localhost: $*" >&2; exit 1; }

# Records a daemon's pid once its pid file appears (a daemon writes it just after forking).
record_pid() {
  local file=$1 name=$2
  for _ in $(seq 100); do [[ -s $file ]] && break; sleep 0.05; done
  [[ -s $file ]] || die "$name wrote no pid file $file; see /var/log/slurm/ and /var/log/munge/"
  cp "$file" "$STATE/$name.pid"
}

# A pid file's process is alive (a zombie left for a PID 1 that does not reap counts as gone).
alive() {
  local pid=$1
  [[ -n "$pid" && -e /proc/$pid ]] || return 1
  [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != Z ]]
}

write_conf() {
  mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
  if [[ -f $CONF ]] && ! grep -qF "$MARK" "$CONF"; then cp "$CONF" "$CONF.bak.$(date +%s)"; fi
  # slurmd refuses a node whose RealMemory exceeds what it detects: take 90 % of it.
  local detected
  detected=$(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
  cat > "$CONF" <<EOF
$MARK
ClusterName=dtsim
SlurmctldHost=localhost
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
MailProg=/bin/true
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$((detected * 9 / 10)) State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
}

start() {
  [[ $(id -u) -eq 0 ]] || die "needs root"
  bash "$HERE/install-deps.sh" slurm
  mkdir -p "$STATE"
  write_conf
  if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null || true
    runuser -u munge -- /usr/sbin/munged
    for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
    record_pid /run/munge/munged.pid munged
  fi
  slurmctld -c
  record_pid /run/slurmctld.pid slurmctld
  for _ in $(seq 100); do scontrol ping >/dev/null 2>&1 && break; sleep 0.1; done
  slurmd -N localhost
  record_pid /run/slurmd.pid slurmd
  for _ in $(seq 100); do
    sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)' && { echo "slurm-localhost: node idle"; return 0; }
    sleep 0.1
  done
  die "the node did not become idle; see /var/log/slurm/"
}

stop() {
  scontrol shutdown >/dev/null 2>&1 || true
  for name in slurmd slurmctld munged; do
    local file="$STATE/$name.pid" pid
    [[ -f $file ]] || continue
    pid=$(cat "$file")
    # Only a pid this script recorded, and only while it is still that daemon.
    if alive "$pid" && [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$name" ]]; then
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
    fi
    rm -f "$file"
  done
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
