#!/usr/bin/env python3
# Snapshots per-thread CPU (utime+stime ticks) and context switches of every consume-shared JVM every 0.25 s.
import os, sys, time, json
out = open(sys.argv[1], 'a')
def pids():
    r = []
    for p in os.listdir('/proc'):
        if not p.isdigit(): continue
        try:
            cl = open(f'/proc/{p}/cmdline','rb').read()
        except Exception: continue
        if b'consume-shared' in cl and b'java' in cl: r.append(int(p))
    return r
while True:
    now = time.time()
    snap = {'t': now, 'p': {}}
    for pid in pids():
        th = {}
        try:
            for tid in os.listdir(f'/proc/{pid}/task'):
                try:
                    st = open(f'/proc/{pid}/task/{tid}/stat').read()
                    comm = st[st.index('(')+1:st.rindex(')')]
                    f = st[st.rindex(')')+2:].split()
                    ut, stt, start = int(f[11]), int(f[12]), int(f[19])
                    vol = nv = 0
                    for line in open(f'/proc/{pid}/task/{tid}/status'):
                        if line.startswith('voluntary_ctxt_switches'): vol = int(line.split()[1])
                        elif line.startswith('nonvoluntary_ctxt_switches'): nv = int(line.split()[1])
                    ns = int(open(f'/proc/{pid}/task/{tid}/schedstat').read().split()[0])
                    th[tid] = [comm, ut, stt, start, vol, nv, ns]
                except Exception: pass
        except Exception: continue
        snap['p'][pid] = th
    if snap['p']:
        out.write(json.dumps(snap) + '\n'); out.flush()
    time.sleep(max(0.0, 0.25 - (time.time() - now)))
