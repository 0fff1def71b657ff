#!/usr/bin/env python3
"""Builds testdata/sample.jsonl.bz2: real OffeneRegister lines for the ingest tests.

Run from the ingest directory: python3 testdata/make_sample.py ../../shared/data
It takes the first lines of three chunks (Kiel HRB 53 EC/KI/RD open chunk 13)
and the lines of chosen register entries: the registry side of real GLEIF
pairs, the chunk copies of records that fixtures_665.jsonl repeats, and a few
Berlin (Charlottenburg) entries. Lines are kept byte for byte.
"""
import bz2
import json
import os
import sys

data = sys.argv[1] if len(sys.argv) > 1 else "../../shared/data"
PREFIX = {"ocdata.chunk1.jsonl.bz2": 1500, "ocdata.chunk13.jsonl.bz2": 1500, "ocdata.chunk53.jsonl.bz2": 500}
WANT = {
    # registry side of real GLEIF pairs
    "B8535_HRA104441", "W1215_HRB2823", "W1215_W1209_HRB2823", "R3201_VR2125",
    "X1321R_HRB1279IZ", "X1321R_HRB1279ME", "X1321R_HRB1279PI", "X1321R_HRB1279EL",
    "M1114_GnR236", "U1104_HRB2840", "B8534_HRA212219", "B8534_HRA212222",
    "W1215_W1104_HRB573", "W1215_HRB573", "W1215_W1109_HRB573",
    "R2604_R2605_VR777", "R2604_VR777", "D3304V_GnR181", "D4201V_HRA2078", "B1204_HRB714327",
}
fixtures = [json.loads(l)["company_number"] for l in open(os.path.join(data, "offeneregister", "fixtures_665.jsonl"))]
WANT |= set(fixtures)  # the chunk copies of fixture records are real duplicates
berlin = 0
out = []
for name in sorted(os.listdir(os.path.join(data, "offeneregister"))):
    if not name.endswith(".jsonl.bz2"):
        continue
    with bz2.open(os.path.join(data, "offeneregister", name), "rb") as f:
        for i, line in enumerate(f):
            if i < PREFIX.get(name, 0):
                out.append(line)
                continue
            number = json.loads(line)["company_number"]
            if number in WANT:
                out.append(line)
            elif number.startswith("F1103R_HRB") and berlin < 20 and b'"currently registered"' in line:
                berlin += 1
                out.append(line)
with bz2.open(os.path.join("testdata", "sample.jsonl.bz2"), "wb", compresslevel=9) as f:
    f.writelines(out)
print(len(out), "lines")
