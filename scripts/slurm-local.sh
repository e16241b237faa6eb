#!/usr/bin/env bash
# A single-node Slurm on this machine, for trying (and testing) examples/campaigns/slurm/: its
# own munged, slurmctld and slurmd, configured in DIR, listening on their own ports, this node
# one testbed (a generic resource `testbed` of count 1), nothing of the system's touched
# (/etc/slurm is not read: every command gets SLURM_CONF=DIR/slurm.conf).
#
#   scripts/slurm-local.sh up DIR      start them; prints `export SLURM_CONF=DIR/slurm.conf`
#   scripts/slurm-local.sh down DIR    stop the three by the pids recorded in DIR
#
# Needs root and Debian's slurmctld, slurmd, slurm-client and munge (scripts/setup.sh installs
# them without starting their system services). Every wait has a deadline (30 s).
set -euo pipefail

usage() { echo "usage: $0 up|down DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
what=$1
if [ "$what" = up ]; then mkdir -p "$2"; fi
dir=$(cd "$2" 2>/dev/null && pwd) || { echo "slurm in $2: no such directory, nothing to stop"; exit 0; }
host=$(hostname -s)

stop() { # PIDFILE NAME: end the process recorded there, if it is still NAME
    local f=$1 name=$2 pid
    [ -f "$f" ] || return 0
    pid=$(cat "$f")
    if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ]; then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$f"
}

if [ "$what" = down ]; then
    stop "$dir/slurmd.pid" slurmd
    stop "$dir/slurmctld.pid" slurmctld
    stop "$dir/munged.pid" munged
    echo "slurm in $dir: stopped"
    exit 0
fi
[ "$what" = up ] || usage
[ "$(id -u)" = 0 ] || { echo "Error: run as root (slurmd starts jobs as their users)" >&2; exit 1; }
for c in munged slurmctld slurmd sbatch sinfo; do
    command -v "$c" >/dev/null || { echo "Error: $c is not installed (scripts/setup.sh installs Slurm and munge)" >&2; exit 1; }
done

mkdir -p "$dir/state" "$dir/spool" "$dir/munge" "$dir/munge-socket"
chmod 755 "$dir"
# munge: a key of this Slurm's own, its own socket, run as the munge user as munged wants.
if [ ! -f "$dir/munge/munge.key" ]; then
    dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
fi
chown -R munge: "$dir/munge" "$dir/munge-socket"
chmod 700 "$dir/munge"
chmod 400 "$dir/munge/munge.key"
# The socket's directory must be open to every user (munged checks).
chmod 755 "$dir/munge-socket"
sock=$dir/munge-socket/munge.socket
runuser -u munge -- munged --key-file="$dir/munge/munge.key" --socket="$sock" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed"
cp "$dir/munge/munged.pid" "$dir/munged.pid"

cpus=$(nproc)
mem=$(awk '/MemTotal/ { print int($2 / 1024 / 2) }' /proc/meminfo)
cat > "$dir/slurm.conf" <<EOF
# A single-node Slurm of scripts/slurm-local.sh (xlatperf): this node is one testbed.
ClusterName=xlatperf
SlurmctldHost=$host
SlurmUser=root
SlurmctldPort=6917
SlurmdPort=6918
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
GresTypes=testbed
NodeName=$host CPUs=$cpus RealMemory=$mem Gres=testbed:1 State=UNKNOWN
PartitionName=testbeds Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
echo "NodeName=$host Name=testbed Count=1" > "$dir/gres.conf"
export SLURM_CONF=$dir/slurm.conf
slurmctld -i
slurmd
# The node is up when sinfo says so (each sinfo at most 2 s: an unreachable slurmctld would
# keep it for its message timeout).
deadline=$((SECONDS + 30))
while [ "$SECONDS" -lt "$deadline" ]; do
    state=$(timeout 2 sinfo -h -n "$host" -o %t 2>/dev/null || true)
    case $state in idle | mix | alloc) break ;; esac
    sleep 0.2
done
case ${state:-} in
    idle | mix | alloc) ;;
    *)
        echo "Error: the node did not come up in 30 s (sinfo: ${state:-nothing}); logs in $dir" >&2
        tail -n 5 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
        exit 1
        ;;
esac
echo "slurm in $dir: node $host $state, one testbed"
echo "export SLURM_CONF=$SLURM_CONF"
