#!/bin/bash
# usage: [MQSIM_* switches] MQSIM=path/to/MQSim ./run.sh NAME SSDCONFIG WORKLOAD
# Runs a patched MQSim (patches/all.patch, built with make) on copies of the
# XMLs in runs/NAME, logging every request's response time (MQSIM_RT_LOG) and
# /usr/bin/time -v, then summarises with percentiles.py. The workload files
# name the traces of ../out (python3 ../gen_trace.py [--mixed]).
set -e
here=$(cd "$(dirname "$0")" && pwd)
name=$1; ssd=$(realpath "$2"); wl=$(realpath "$3")
d=$here/runs/$name
mkdir -p "$d"
cp "$ssd" "$d/ssdconfig.xml"
sed "s#<File_Path>../out/#<File_Path>$here/../out/#" "$wl" > "$d/workload.xml"
env | grep "^MQSIM_\|^RUN_PREFIX" > "$d/env.txt" || true
cd "$d"
MQSIM_RT_LOG=$d/rt.txt $RUN_PREFIX /usr/bin/time -v -o "$d/time.txt" "${MQSIM:?set MQSIM to the MQSim binary}" \
  -i "$d/ssdconfig.xml" -w "$d/workload.xml" > "$d/stdout.txt" 2> "$d/stderr.txt" || echo "exit status $?" >> "$d/stderr.txt"
python3 "$here/percentiles.py" "$d" > "$d/summary.txt"
cat "$d/summary.txt"
