#!/usr/bin/env python3
# For C2 (level 4) compilations after GO: was the method C2-compiled before GO already (a recompile) or not (first)?
import json, subprocess, sys, datetime, re, collections
f, go, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
ev = json.loads(subprocess.run(['jfr','print','--json','--events','jdk.Compilation,jdk.Deoptimization',f],capture_output=True,text=True).stdout)['recording']['events']
def t(e): return datetime.datetime.fromisoformat(e['values']['startTime'].replace('Z','+00:00')).timestamp()
def d(e):
    m = re.match(r'PT(?:(\d+)M)?([\d.]+)S', e['values'].get('duration','PT0S')); return int(m.group(1) or 0)*60+float(m.group(2)) if m else 0
def name(e): m=e['values']['method']; return m['type']['name']+'::'+m['name']+m['descriptor']
comp=[e for e in ev if e['type']=='jdk.Compilation']; deo=[e for e in ev if e['type']=='jdk.Deoptimization']
c2before=collections.Counter(name(e) for e in comp if t(e)<go and e['values']['compileLevel']==4)
deo_before=collections.Counter(name(e) for e in deo if t(e)<go)
first=re_=0; ft=rt=0.0
for e in comp:
    if go<=t(e)<=end and e['values']['compileLevel']==4:
        if c2before[name(e)]: re_+=1; rt+=d(e)
        else: first+=1; ft+=d(e)
print(f'C2 compiles in window: first-time {first} ({ft:.2f} s), recompiles of methods C2-compiled before GO {re_} ({rt:.2f} s)')
# compile time per second of uptime, to see whether the queue was still busy at GO
start=min(t(e) for e in comp)
b=collections.Counter()
for e in comp: b[int(t(e)-go)]+=d(e)
print('compile seconds per 1-s bucket relative to GO:', {k:round(v,2) for k,v in sorted(b.items())})
