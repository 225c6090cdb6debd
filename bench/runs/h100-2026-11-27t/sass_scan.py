#!/usr/bin/env python3
# Audit: in each kernel's SASS, does any global memory access come before the
# griddepcontrol.wait (ACQBULK) in address order? (ptxas may move loads.)
import glob, re, subprocess, sys
acc = re.compile(r'\b(LDG|STG|ATOMG|RED|LDGSTS|UTMALDG|UBLKCP|UTMASTG|UTMAPF|CCTL)\b[.\w]*')
n = bad = 0
for c in sorted(glob.glob(sys.argv[1] + '/*.cubin')):
    sass = subprocess.run(['cuobjdump', '-sass', c], capture_output=True, text=True).stdout
    for fn, body in re.findall(r'Function : (\S+)\n(.*?)(?=\n\s*Function : |\Z)', sass, re.S):
        ins = [l.split(';')[0].strip() for l in body.split('\n') if re.search(r'/\*[0-9a-f]{4}\*/', l)]
        acqs = [i for i, l in enumerate(ins) if 'ACQBULK' in l]
        n += 1
        if not acqs:
            print(f'NOWAIT {c.split("/")[-1]} {fn}'); bad += 1; continue
        before = [re.sub(r'^/\*[0-9a-f]+\*/\s*', '', ins[i]) for i in range(acqs[-1]) if acc.search(ins[i])]
        first = [b for b in before if 'UTMALDG' not in b] if len(acqs) > 1 else before
        pre_first = [re.sub(r'^/\*[0-9a-f]+\*/\s*', '', ins[i]) for i in range(acqs[0]) if acc.search(ins[i])]
        if pre_first or (len(acqs) > 1 and first):
            bad += 1
            print(f'EARLY {c.split("/")[-1]} {fn} waits={len(acqs)} before-first={pre_first[:4]} before-last={first[:4]}')
print(f'{n} kernels, {bad} with a global access before a wait')
