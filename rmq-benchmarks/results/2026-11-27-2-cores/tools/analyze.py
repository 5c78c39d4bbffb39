#!/usr/bin/env python3
# Per-figure, per-thread-category CPU and context switches per message from sampler snapshots.
import json, sys, collections
HZ = 100
btime = [int(l.split()[1]) for l in open('/proc/stat') if l.startswith('btime')][0]
snaps = [json.loads(l) for l in open(sys.argv[1])]
msgs = int(sys.argv[2])
labels = sys.argv[3].split(',')  # figure labels in order, e.g. W1B-1,W1C-1,W1B-2,W1C-2
def cat(name):
    if '-han' in name: return 'handler'
    if '-pol' in name: return 'poller'
    if name.startswith('lettuce-nio') or name.startswith('lettuce-epol'): return 'netty'
    if 'CompilerThre' in name: return 'JIT'
    if name.startswith('GC Thread') or name.startswith('G1'): return 'GC'
    if name == 'VM Thread': return 'VM Thread'
    return 'other:' + name
# group consecutive snapshots by pid set (a figure = a set of JVMs started together)
figs = []
for s in snaps:
    ps = frozenset(s['p'])
    if figs and figs[-1][0] & ps: 
        figs[-1][0] |= ps; figs[-1][1].append(s)
    else:
        figs.append([set(ps), [s]])
rows = []
def cpu(v): return v[6] / 1e7 if len(v) > 6 else v[1] + v[2]
for i, (ps, ss) in enumerate(figs):
    label = labels[i] if i < len(labels) else f'fig{i}'
    tot = collections.Counter(); vol = collections.Counter(); nv = collections.Counter(); nthreads = collections.Counter()
    span = 0
    for pid in ps:
        pss = [s for s in ss if str(pid) in s['p']]
        pols = [(v[3], tid) for s in pss for tid, v in s['p'][str(pid)].items() if '-pol' in v[0]]
        if not pols: continue
        go_tick = max(pols)[0] - 5  # the handler threads start just before the poller
        go_wall = btime + go_tick / HZ
        base = [s for s in pss if s['t'] <= go_wall]
        base = base[-1]['p'][str(pid)] if base else {}
        # end: the last snapshot where handler CPU grew
        def hcpu(s): return sum(cpu(v) for v in s['p'][str(pid)].values() if '-han' in v[0] and v[3] >= go_tick)
        end_i = 0
        for k in range(1, len(pss)):
            if hcpu(pss[k]) > hcpu(pss[k-1]): end_i = k
        if end_i == 0 or pss[end_i]['t'] < go_wall: continue  # a JVM of the previous figure, exiting
        end_s = pss[end_i]
        span = max(span, end_s['t'] - go_wall)
        print(f'#pid {pid} go {go_wall:.2f} end {end_s["t"]:.2f}', file=sys.stderr)
        # last value seen up to end for each tid
        last = {}
        for s in pss[:end_i+1]:
            for tid, v in s['p'][str(pid)].items(): last[tid] = v
        for tid, v in last.items():
            b = base.get(tid)
            if b and b[3] != v[3]: b = None
            if b is None and v[3] < go_tick: continue  # died before GO (warm-up container)
            c = cat(v[0])
            tot[c] += cpu(v) - (cpu(b) if b else 0)
            vol[c] += v[4] - (b[4] if b else 0)
            nv[c] += v[5] - (b[5] if b else 0)
    rows.append((label, len(ps), span, tot, vol, nv))
cats = ['handler','poller','netty','JIT','GC','VM Thread']
for label, n, span, tot, vol, nv in rows:
    other = sum(v for k, v in tot.items() if k not in cats)
    total = sum(tot.values())
    us = lambda ticks: ticks * 1e6 / HZ / msgs
    print(f'{label}: {n} JVM(s), ~{span:.1f} s GO->last, total {us(total):.2f} us/msg; ' +
          ', '.join(f'{c} {us(tot[c]):.2f}' for c in cats) + f', other {us(other):.2f}')
    top_other = sorted(((v, k) for k, v in tot.items() if k not in cats), reverse=True)[:4]
    print('    other:', ', '.join(f'{k[6:]} {us(v):.2f}' for v, k in top_other))
    print('    vol ctx sw per 1k msgs: ' + ', '.join(f'{c} {vol[c]*1000/msgs:.1f}' for c in cats) +
          f'; nonvol per 1k msgs total {sum(nv.values())*1000/msgs:.1f}')
