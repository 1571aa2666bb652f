#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for testing the Slurm profile (workflow/profiles/slurm)
# with real daemons: munged, MariaDB, slurmdbd (accounting: the executor plugin asks sacct for job
# states), slurmctld and slurmd, all running as root on localhost from Debian's packages.
#
#   scripts/slurm-cluster.sh install   # the Debian packages (root; once per machine; idempotent)
#   scripts/slurm-cluster.sh up        # install if needed, write the configs, start the daemons, wait
#   . "$LIS_SLURM_DIR/env"             # SLURM_CONF for sinfo/sbatch/sacct (printed by `up`)
#   scripts/slurm-cluster.sh status    # the daemons and `sinfo`
#   scripts/slurm-cluster.sh down      # cancel jobs, stop every daemon it started, remove the folder
#
# Everything lives in one folder, $LIS_SLURM_DIR (default /tmp/lis-slurm): configs, munge key and
# socket, database files, spool, state and logs. Nothing is written to /etc, and the daemons listen
# on their own ports, so a system MariaDB or munge is never touched. One link outside the folder:
# /run/slurm/conf -> $LIS_SLURM_DIR/etc, where a configless Slurm node keeps its config and where
# Slurm's commands look when SLURM_CONF is unset and /etc/slurm/slurm.conf is missing (the executor
# plugin's job step drops SLURM_* variables before it calls srun inside the job). So `up` refuses
# to run on a machine with /etc/slurm/slurm.conf (a real Slurm is configured there), and `down`
# removes the link. `up` on a running cluster does nothing; `up` after a crash clears what is left
# first; `down` stops only the processes whose ids `up` recorded, and is a no-op when nothing runs.
#
# The cluster: ClusterName lis; node $(hostname -s) declaring LIS_SLURM_CPUS CPUs and
# LIS_SLURM_MEM_MB of memory (SlurmdParameters=config_overrides: the profile's real requests fit
# a small machine, the jobs share its real cores); partitions `cpu` (default) and `gpu` (the same
# node, no GPUs: GPU jobs stay pending there); accounts `lis` and `lis-alt` with root in both,
# associations enforced (a job with an unknown account is refused).
#
# Environment: LIS_SLURM_DIR, LIS_SLURM_PORT (base port, default 16817: slurmctld, +1 slurmd,
# +2 slurmdbd, +3 MariaDB), LIS_SLURM_CPUS (default 32), LIS_SLURM_MEM_MB (default 262144),
# LIS_SLURM_WAIT_S (default 90).
set -euo pipefail

DIR=${LIS_SLURM_DIR:-/tmp/lis-slurm}
PORT=${LIS_SLURM_PORT:-16817}
CPUS=${LIS_SLURM_CPUS:-32}
MEM_MB=${LIS_SLURM_MEM_MB:-262144}
WAIT_S=${LIS_SLURM_WAIT_S:-90}
CLUSTER=lis
NODE=$(hostname -s)
PACKAGES=(slurmctld slurmd slurmdbd slurm-client munge mariadb-server)
DAEMONS=(munged mariadbd slurmdbd slurmctld slurmd)  # start order; stopped in reverse

log() { printf '[slurm-cluster] %s\n' "$*" >&2; }
die() { printf '[slurm-cluster] error: %s\n' "$*" >&2; exit 1; }

need_root() { [ "$(id -u)" = 0 ] || die "run as root: the daemons run as root on localhost (a test cluster)"; }

install_packages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  need_root
  [ -r /etc/debian_version ] && command -v apt-get >/dev/null 2>&1 \
    || die "not a Debian-family system: install Slurm (slurmctld, slurmd, slurmdbd, clients), munge and MariaDB yourself"
  log "installing Debian packages: ${missing[*]}"
  # The packages' maintainer scripts would start their system services: forbid that for this install
  # (policy-rc.d answers 101 = not allowed), restoring whatever was there before.
  local policy=/usr/sbin/policy-rc.d made_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy"; chmod 755 "$policy"; made_policy=1
  fi
  local rc=0
  { DEBIAN_FRONTEND=noninteractive apt-get update -qq \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } || rc=$?
  [ "$made_policy" = 1 ] && rm -f "$policy"
  [ "$rc" = 0 ] || die "apt-get install failed ($rc)"
}

CONF_LINK=/run/slurm/conf

link_config() {  # /run/slurm/conf -> $DIR/etc (Slurm's commands find the cluster there without SLURM_CONF)
  [ ! -e /etc/slurm/slurm.conf ] \
    || die "/etc/slurm/slurm.conf exists: this machine is configured for a real Slurm cluster, which Slurm's commands would reach instead of the test cluster; use another machine"
  if [ -e "$CONF_LINK" ] || [ -L "$CONF_LINK" ]; then
    [ "$(readlink "$CONF_LINK")" = "$DIR/etc" ] \
      || die "$CONF_LINK exists and is not this test cluster's (a configless slurmd runs here?); stop it or use another machine"
  fi
  mkdir -p "$(dirname "$CONF_LINK")"
  ln -sfn "$DIR/etc" "$CONF_LINK"
}

unlink_config() {
  if [ -L "$CONF_LINK" ] && [ "$(readlink "$CONF_LINK")" = "$DIR/etc" ]; then
    rm -f "$CONF_LINK"
    rmdir "$(dirname "$CONF_LINK")" 2>/dev/null || true
  fi
}

pid_of() { cat "$DIR/run/$1.pid" 2>/dev/null || true; }
alive() { local p; p=$(pid_of "$1"); [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

start() {  # start NAME CMD...: run a daemon in the foreground of its own session, record its pid
  local name=$1; shift
  setsid "$@" >>"$DIR/log/$name.out" 2>&1 < /dev/null &
  echo $! > "$DIR/run/$name.pid"
}

wait_for() {  # wait_for WHAT CMD...: until CMD succeeds, or die after WAIT_S with the logs' tails
  local what=$1 t=0; shift
  until "$@" >/dev/null 2>&1; do
    sleep 1; t=$((t + 1))
    if [ "$t" -ge "$WAIT_S" ]; then
      for f in "$DIR"/log/*; do echo "== $f"; tail -n 15 "$f"; done >&2
      die "$what did not come up within ${WAIT_S}s (logs above, in $DIR/log)"
    fi
  done
}

write_configs() {
  local etc=$DIR/etc s=$DIR/munge/munge.socket
  cat > "$etc/slurm.conf" <<EOF
# Written by scripts/slurm-cluster.sh: a one-node test cluster on localhost.
ClusterName=$CLUSTER
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$s
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/run/slurmctld.daemon.pid
SlurmdPidFile=$DIR/run/slurmd.daemon.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
SlurmdParameters=config_overrides
MinJobAge=300
InactiveLimit=0
KillWait=10
Waittime=0
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$((PORT + 2))
AccountingStoragePass=$s
AccountingStorageEnforce=associations
AccountingStoreFlags=job_comment
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM_MB State=UNKNOWN
PartitionName=cpu Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=$NODE Default=NO MaxTime=INFINITE State=UP
EOF
  cat > "$etc/slurmdbd.conf" <<EOF
# Written by scripts/slurm-cluster.sh
AuthType=auth/munge
AuthInfo=socket=$s
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$((PORT + 2))
SlurmUser=root
LogFile=$DIR/log/slurmdbd.log
PidFile=$DIR/run/slurmdbd.daemon.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$((PORT + 3))
StorageUser=slurm
StoragePass=lis-slurm-test
StorageLoc=slurm_acct_db
EOF
  chmod 600 "$etc/slurmdbd.conf"
  printf 'export SLURM_CONF=%s\n' "$etc/slurm.conf" > "$DIR/env"
}

up() {
  need_root
  if [ -d "$DIR" ] && alive slurmctld && alive slurmd && alive slurmdbd; then
    log "already up ($DIR); . $DIR/env"
    return 0
  fi
  [ -d "$DIR" ] && { log "clearing what an earlier cluster left in $DIR"; down; }
  install_packages
  local t0=$SECONDS
  link_config
  mkdir -p "$DIR"/{etc,run,log,state,spool,munge,mysql}
  chmod 700 "$DIR" "$DIR/munge"
  export SLURM_CONF=$DIR/etc/slurm.conf
  write_configs

  # munge: its own key and socket (never /etc/munge/munge.key or /run/munge)
  dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$DIR/munge/munge.key"
  start munged munged --foreground --force --key-file="$DIR/munge/munge.key" \
    --socket="$DIR/munge/munge.socket" --pid-file="$DIR/run/munged.daemon.pid" \
    --log-file="$DIR/log/munged.log" --seed-file="$DIR/munge/munged.seed"
  wait_for munged munge -S "$DIR/munge/munge.socket" -n

  # MariaDB on its own port and socket, data in $DIR/mysql
  log "munged up ($((SECONDS - t0))s); initialising MariaDB"
  mariadb-install-db --no-defaults --datadir="$DIR/mysql" --user=root --auth-root-authentication-method=socket \
    --skip-test-db >>"$DIR/log/mariadb-install.out" 2>&1 || { tail -n 20 "$DIR/log/mariadb-install.out" >&2; die "mariadb-install-db failed"; }
  start mariadbd mariadbd --no-defaults --user=root --datadir="$DIR/mysql" --socket="$DIR/run/mysql.sock" \
    --port=$((PORT + 3)) --bind-address=127.0.0.1 --pid-file="$DIR/run/mariadbd.daemon.pid" \
    --log-error="$DIR/log/mariadb.log" --skip-log-bin --innodb-buffer-pool-size=256M --innodb-lock-wait-timeout=900
  wait_for mariadbd mariadb --no-defaults -S "$DIR/run/mysql.sock" -u root -e 'SELECT 1'
  mariadb --no-defaults -S "$DIR/run/mysql.sock" -u root <<'SQL'
CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'lis-slurm-test';
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'lis-slurm-test';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
SQL

  log "MariaDB up ($((SECONDS - t0))s); starting slurmdbd"
  # accounting, then the cluster, its accounts and root's associations
  start slurmdbd slurmdbd -D
  wait_for slurmdbd sacctmgr -n list cluster
  sacctmgr -i add cluster "$CLUSTER" >/dev/null
  sacctmgr -i add account lis,lis-alt Cluster="$CLUSTER" Description=lis Organization=lis >/dev/null
  sacctmgr -i add user root Account=lis,lis-alt DefaultAccount=lis Cluster="$CLUSTER" >/dev/null

  start slurmctld slurmctld -D -f "$SLURM_CONF"
  wait_for slurmctld scontrol ping
  start slurmd slurmd -D -f "$SLURM_CONF" -N "$NODE"
  wait_for "the node" node_idle
  wait_for sacct sacct -n -X --starttime now-1hour
  log "up in $((SECONDS - t0))s: node $NODE ($CPUS CPUs, $MEM_MB MB declared), partitions cpu (default) and gpu, accounts lis and lis-alt"
  log "use it: . $DIR/env   (export SLURM_CONF=$SLURM_CONF)"
}

node_idle() { sinfo -h -N -n "$NODE" -o '%T' | grep -qE '^(idle|mixed|allocated)'; }

down() {
  [ -d "$DIR" ] || { unlink_config; log "nothing to stop ($DIR does not exist)"; return 0; }
  export SLURM_CONF=$DIR/etc/slurm.conf
  if alive slurmctld; then
    scancel --cluster="$CLUSTER" --user=root >/dev/null 2>&1 || true
    local t=0
    while [ -n "$(squeue -h -o %i 2>/dev/null)" ] && [ "$t" -lt 30 ]; do sleep 1; t=$((t + 1)); done
  fi
  local i name p
  for ((i = ${#DAEMONS[@]} - 1; i >= 0; i--)); do
    name=${DAEMONS[$i]}
    p=$(pid_of "$name")
    [ -n "$p" ] && kill -0 "$p" 2>/dev/null || continue
    kill -TERM "$p" 2>/dev/null || true
    local t=0
    while kill -0 "$p" 2>/dev/null && [ "$t" -lt 20 ]; do sleep 0.5; t=$((t + 1)); done
    if kill -0 "$p" 2>/dev/null; then log "$name ($p) ignored SIGTERM: SIGKILL"; kill -KILL "$p" 2>/dev/null || true; fi
  done
  unlink_config
  rm -rf "$DIR"
  log "down: daemons stopped, $DIR removed"
}

status() {
  [ -d "$DIR" ] || { echo "down"; return 3; }
  export SLURM_CONF=$DIR/etc/slurm.conf
  local name rc=0
  for name in "${DAEMONS[@]}"; do
    if alive "$name"; then echo "$name: running (pid $(pid_of "$name"))"; else echo "$name: not running"; rc=3; fi
  done
  sinfo 2>&1 || rc=3
  return $rc
}

case "${1:-}" in
  install) install_packages ;;
  up) up ;;
  down) down ;;
  status) status ;;
  *) die "usage: $0 install|up|down|status" ;;
esac
