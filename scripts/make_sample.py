# Rebuilds data/sample.jsonl.bz2 from the real OffeneRegister chunks in ../shared/data:
# every 45th record of each chunk, the entries sharing a register number with
# some of them (suffixes, former courts), the entries GLEIF golden-copy
# records point at, and the 665 fixture records. Deterministic.
import bz2, json, glob, csv, re, collections
import os
base=os.path.join(os.path.dirname(os.path.abspath(__file__)),'..','..','shared','data')
# GLEIF golden copy: (ra, type+number) to include linked registry entries
ra2code={}
for r in csv.DictReader(open(base+'/courts/german_registry_courts_consolidated.csv')):
    if r['gleif_ra_code_guess'] and r['is_offeneregister_current_court_prefix']=='yes':
        ra2code[r['gleif_ra_code_guess']]=r['code']
want=set()
for r in csv.DictReader(open(base+'/gleif/lei_records_de_goldencopy.csv')):
    m=re.match(r'\s*(HRB|HRA|VR|GnR|PR)\s*(\d+)',r['Entity.RegistrationAuthority.RegistrationAuthorityEntityID'])
    if m and r['Entity.RegistrationAuthority.RegistrationAuthorityID'] in ra2code:
        want.add((ra2code[r['Entity.RegistrationAuthority.RegistrationAuthorityID']],m.group(1),str(int(m.group(2)))))
out=[]
seen=set()
def key(rec):
    cn=rec.get('company_number','')
    aa=rec.get('all_attributes') or {}
    court=cn.split('_')[0]
    return (court, aa.get('_registerArt'), str(aa.get('_registerNummer','')).lstrip('0'))
files=sorted(glob.glob(base+'/offeneregister/ocdata.chunk*.jsonl.bz2'))
for f in files:
    lines=bz2.open(f,'rt',encoding='utf-8').read().splitlines()
    groups=collections.defaultdict(list)
    recs=[]
    for i,l in enumerate(lines):
        try: rec=json.loads(l)
        except Exception: continue
        k=key(rec); groups[k].append(i); recs.append((i,k))
    pick=set()
    for i,k in recs:
        if i%45==0 or k in want:
            pick.add(i)
            if len(groups[k])>1 and len(groups[k])<=6 and i%90==0:
                pick.update(groups[k])
    for i in sorted(pick):
        if lines[i] not in seen:
            seen.add(lines[i]); out.append(lines[i])
for l in open(base+'/offeneregister/fixtures_665.jsonl',encoding='utf-8'):
    l=l.rstrip('\n')
    if l and l not in seen:
        seen.add(l); out.append(l)
with bz2.open(os.path.join(os.path.dirname(os.path.abspath(__file__)),'..','data','sample.jsonl.bz2'),'wt',encoding='utf-8',compresslevel=9) as w:
    for l in out: w.write(l+'\n')
print(len(out))
