#!/usr/bin/env python3
"""Summarise one MQSim run directory: per-request response times from rt.txt (patched MQSim,
lines "is_read device_response_time_ns end_to_end_delay_ns"), MQSim's own figures from
workload_scenario_1.xml, and /usr/bin/time -v from time.txt. Percentiles are nearest-rank
(the smallest value with at least p% of the requests at or below it)."""
import math
import re
import sys
import os

d = sys.argv[1]

def pct(sorted_vals, p):
    if not sorted_vals:
        return float('nan')
    k = max(1, math.ceil(p / 100.0 * len(sorted_vals)))
    return sorted_vals[k - 1]

allv, rd, wr, e2e = [], [], [], []
with open(os.path.join(d, 'rt.txt')) as f:
    for line in f:
        parts = line.split()
        if len(parts) < 3:
            continue  # truncated last line of a crashed run
        t, rt, de = parts[:3]
        rt = int(rt)
        allv.append(rt)
        e2e.append(int(de))
        (rd if t == '1' else wr).append(rt)

def row(label, v):
    v = sorted(v)
    if not v:
        return f'{label}: n=0'
    us = lambda x: x / 1000.0
    return (f'{label}: n={len(v)} mean={us(sum(v)/len(v)):.1f} min={us(v[0]):.1f} '
            + ' '.join(f'p{p}={us(pct(v,p)):.1f}' for p in (50, 90, 99, 99.9))
            + f' max={us(v[-1]):.1f} (us)')

print(row('device response, all', allv))
print(row('device response, writes', wr))
print(row('device response, reads', rd))
print(row('end-to-end delay, all', e2e))

xml = os.path.join(d, 'workload_scenario_1.xml')
if os.path.exists(xml):
    s = open(xml).read()
    keys = ['Request_Count', 'Read_Request_Count', 'Write_Request_Count', 'Device_Response_Time',
            'Min_Device_Response_Time', 'Max_Device_Response_Time', 'End_to_End_Request_Delay',
            'Issued_Flash_Read_CMD', 'Issued_Flash_Multiplane_Read_CMD', 'Issued_Flash_Program_CMD',
            'Issued_Flash_Multiplane_Program_CMD', 'Issued_Flash_Erase_CMD', 'Issued_Flash_Multiplane_Erase_CMD',
            'Issued_Flash_Interleaved_Read_CMD', 'Issued_Flash_Interleaved_Program_CMD', 'Issued_Flash_Interleaved_Erase_CMD',
            'Issued_Flash_Suspend_Program_CMD', 'Issued_Flash_Suspend_Erase_CMD',
            'Issued_Flash_Copyback_Read_CMD', 'Issued_Flash_Copyback_Program_CMD',
            'Total_GC_Executions', 'Average_Page_Movement_For_GC', 'Total_Flash_Reads', 'Total_Flash_Writes']
    for k in keys:
        m = re.findall(r'\b%s="([^"]*)"' % k, s)
        if m:
            print(f'{k} = {", ".join(m)}')
    g = lambda k: int(re.search(r'\b%s="([^"]*)"' % k, s).group(1))
    # a multi-plane command on this 2-plane die carries 2 transactions
    progs = g('Issued_Flash_Program_CMD') + 2 * g('Issued_Flash_Multiplane_Program_CMD')
    reads = g('Issued_Flash_Read_CMD') + 2 * g('Issued_Flash_Multiplane_Read_CMD')
    erases = g('Issued_Flash_Erase_CMD') + 2 * g('Issued_Flash_Multiplane_Erase_CMD')
    print(f'DERIVED page programs = {progs}, page reads = {reads}, block erases = {erases} (single + 2 x multi-plane)')
else:
    print('no workload_scenario_1.xml')
tf = os.path.join(d, 'time.txt')
if os.path.exists(tf):
    for line in open(tf):
        if any(x in line for x in ('Elapsed (wall', 'User time', 'System time', 'Maximum resident', 'Exit status')):
            print(line.strip())
