#!/usr/bin/env bash
# A one-node Slurm cluster on this machine (slurmctld + slurmd on localhost, munge for auth), for
# testing the job-array recipe where there is no cluster (CI: a fresh machine, as root).
#   scripts/slurm/local_cluster.sh install   # apt-get install slurm-wlm munge (Debian/Ubuntu)
#   scripts/slurm/local_cluster.sh start     # write /etc/slurm/slurm.conf, start the daemons, wait for the node
#   scripts/slurm/local_cluster.sh stop
#   scripts/slurm/local_cluster.sh status    # exit 0 when a job can be submitted
# Needs root. `start` leaves a cluster that is already up (its own or another's) as it is.
set -euo pipefail

conf=/etc/slurm/slurm.conf
host=$(hostname -s)

status() {
  command -v sinfo >/dev/null 2>&1 || return 1
  # 30 s: a busy 2-core machine (CI's) can be slow to answer.
  timeout 30 sinfo -h -o '%T' 2>/dev/null | grep -Eq '^(idle|mixed|allocated|completing)'
}

install() {
  local missing=()
  for p in slurm-wlm munge; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  ((${#missing[@]})) || return 0
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

write_config() {
  mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
  # Memory in MiB as slurmd counts it, a little less so that the node is never "low memory".
  local memory=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 9 / 10 ))
  cat > "$conf" <<CONF
# Written by shapescope's scripts/slurm/local_cluster.sh: one node, this machine.
ClusterName=shapescope-local
SlurmctldHost=$host(127.0.0.1)
AuthType=auth/munge
SlurmUser=root
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmdSpoolDir=/var/spool/slurmd
StateSaveLocation=/var/spool/slurmctld
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=60
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$memory State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
}

start() {
  if status; then echo "local_cluster: a Slurm cluster is already up"; return 0; fi
  [ "$(id -u)" -eq 0 ] || { echo "local_cluster: needs root" >&2; return 1; }
  install
  if [ ! -s /etc/munge/munge.key ]; then
    mkdir -p /etc/munge
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
    chown munge:munge /etc/munge/munge.key 2>/dev/null || true
    chmod 400 /etc/munge/munge.key
  fi
  mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null || true
  pgrep -x munged >/dev/null || runuser -u munge -- /usr/sbin/munged 2>/dev/null || /usr/sbin/munged --force
  write_config
  pgrep -x slurmctld >/dev/null || /usr/sbin/slurmctld
  pgrep -x slurmd >/dev/null || /usr/sbin/slurmd
  # Up to five minutes for the node to come up: the daemons start slowly on a busy machine.
  local deadline=$((SECONDS + 300))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if status; then
      scontrol update nodename="$host" state=resume >/dev/null 2>&1 || true
      echo "local_cluster: up ($(sinfo -h -o '%N %T %c CPUs'))"
      return 0
    fi
    sleep 1
  done
  echo "local_cluster: the node did not come up; see /var/log/slurm/slurmctld.log and slurmd.log" >&2
  sinfo >&2 || true
  return 1
}

stop() {
  for daemon in slurmd slurmctld; do
    pid=$(pgrep -x "$daemon" || true)
    [ -n "$pid" ] && kill $pid
  done
  return 0
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 install|start|stop|status" >&2; exit 2 ;;
esac
