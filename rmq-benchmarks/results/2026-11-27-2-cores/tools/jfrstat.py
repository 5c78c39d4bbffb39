#!/usr/bin/env python3
# jfrstat.py FILE GO_EPOCH END_EPOCH MSGS_IN_THIS_JVM: JIT/deopt/park/GC in the window [GO, END] of one JVM.
import json, subprocess, sys, datetime, collections
f, go, end, msgs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
def events(names):
    out = subprocess.run(['jfr', 'print', '--json', '--events', names, f], capture_output=True, text=True).stdout
    return json.loads(out)['recording']['events']
def t(e):
    s = e['values']['startTime']
    return datetime.datetime.fromisoformat(s.replace('Z', '+00:00')).timestamp()
def dur(e):
    d = e['values'].get('duration', 'PT0S')
    # ISO-8601 PTn.nS
    import re
    m = re.match(r'PT(?:(\d+)M)?([\d.]+)S', d)
    return (int(m.group(1) or 0) * 60 + float(m.group(2))) if m else 0.0
comp = events('jdk.Compilation')
inw = [e for e in comp if go <= t(e) <= end]
before = [e for e in comp if t(e) < go]
lv = collections.Counter(); lvt = collections.Counter(); meth = collections.Counter()
for e in inw:
    v = e['values']; lv[v['compileLevel']] += 1; lvt[v['compileLevel']] += dur(e)
    m = v['method']; meth[(m['type']['name'] + '::' + m['name'], v['compileLevel'])] += dur(e)
print(f'compilations before GO {len(before)} ({sum(map(dur,before)):.2f} s); in window {len(inw)} ({sum(map(dur,inw)):.2f} s compile wall), per 1k msgs {len(inw)*1000/msgs:.2f}')
print('  by level (count, s):', {k: (lv[k], round(lvt[k], 2)) for k in sorted(lv)})
print('  osr in window:', sum(1 for e in inw if e['values'].get('isOsr')))
print('  top methods by compile time in window:')
for (m, l), d in meth.most_common(12): print(f'    {d*1000:7.1f} ms L{l} {m}')
deo = events('jdk.Deoptimization')
dw = [e for e in deo if go <= t(e) <= end]
print(f'deoptimizations before GO {sum(1 for e in deo if t(e) < go)}, in window {len(dw)}')
rc = collections.Counter((e['values']['reason'], e['values']['action']) for e in dw)
print('  by reason/action:', rc.most_common(8))
dm = collections.Counter(e['values']['method']['type']['name'] + '::' + e['values']['method']['name'] for e in dw)
print('  top methods:', dm.most_common(8))
pk = [e for e in events('jdk.ThreadPark') if go <= t(e) <= end]
pt = collections.Counter(); pn = collections.Counter()
for e in pk:
    th = e['values']['eventThread']['javaName'] if e['values'].get('eventThread') else '?'
    import re; th = re.sub(r'\d+$', 'N', th)
    pn[th] += 1; pt[th] += dur(e)
print(f'parks in window {len(pk)}, per 1k msgs {len(pk)*1000/msgs:.1f}')
for th, n in pn.most_common(8): print(f'    {th}: {n} ({n*1000/msgs:.1f}/1k msgs, mean {pt[th]/n*1000:.2f} ms)')
gc = [e for e in events('jdk.GarbageCollection') if go <= t(e) <= end]
print(f'GCs in window {len(gc)}, sum of pauses {sum(float(e["values"]["sumOfPauses"].strip("PTS") or 0) for e in gc)*1000:.1f} ms')
