#!/usr/bin/env python3
"""Scores echo cancellers as listeners would: AECMOS and DNSMOS (P.835) from `speechmos`.

Usage: mos.py JOBS.json        (one JSON object per line on stdout, one per job)

JOBS.json is a list of jobs, each:
  {"id": ANY, "far": WAV, "mic": WAV, "out": WAV,
   "far_single_talk_s": [[start, end], ...], "double_talk_s": [start, end] | null,
   "near_single_talk_s": [[start, end], ...]}          (segments optional; empty: blind)

For each job it prints {"id": .., and the scores it could compute}:
  aecmos_echo_st       far-end single talk: echo MOS (how little echo is left)
  aecmos_echo_dt       double talk: echo MOS
  aecmos_deg_dt        double talk: degradation MOS (how intact the near end is)
  aecmos_deg_nst       near-end single talk: degradation MOS
  dnsmos_sig, dnsmos_bak, dnsmos_ovrl   P.835 over the double talk (or the whole output)
  aecmos_echo, aecmos_deg               blind (no segments given: a real recording): the
                                        scenario-less AECMOS model over the whole clip

Segments shorter than 2 s are skipped; a kind with several segments gets their length-weighted
mean. AECMOS reads at most 20 s, DNSMOS averages 9 s windows. The models ship inside the
`speechmos` wheel (ONNX), so nothing is fetched at run time. Used by `aecbench`, never by the
library or its tests: `pip install speechmos onnxruntime librosa` into the venv (Tools/score's).
"""
import json
import sys

import numpy as np
from scipy.io import wavfile

RATE = 16000
MIN_SECONDS = 2.0


def load(path):
    sr, x = wavfile.read(path)
    x = x.astype(np.float64) / 32768.0 if x.dtype == np.int16 else x.astype(np.float64)
    if x.ndim > 1:
        x = x.mean(axis=1)
    if sr != RATE:
        from scipy.signal import resample_poly
        g = np.gcd(sr, RATE)
        x = resample_poly(x, RATE // g, sr // g)
    return np.clip(x, -1, 1)


def cut(x, segment):
    a, b = (int(round(t * RATE)) for t in segment)
    return x[a:b]


def aecmos(talk_type, far, mic, out):
    from speechmos import aecmos as model
    r = model.run({"lpb": far, "mic": mic, "enh": out}, RATE, talk_type=talk_type)
    return r["echo_mos"], r["deg_mos"]


def weighted(scores):
    """Length-weighted means of (length, echo, deg) tuples."""
    total = sum(n for n, _, _ in scores)
    if total == 0:
        return None, None
    return (sum(n * e for n, e, _ in scores) / total, sum(n * d for n, _, d in scores) / total)


def score_segments(talk_type, segments, far, mic, out):
    scores = []
    for seg in segments or []:
        if seg is None or seg[1] - seg[0] < MIN_SECONDS:
            continue
        f, m, o = cut(far, seg), cut(mic, seg), cut(out, seg)
        n = min(len(f), len(m), len(o))
        if n < MIN_SECONDS * RATE:
            continue
        e, d = aecmos(talk_type, f[:n], m[:n], o[:n])
        scores.append((n, e, d))
    return weighted(scores)


def dnsmos(x):
    from speechmos import dnsmos as model
    r = model.run(x.astype(np.float32), RATE)
    return r["sig_mos"], r["bak_mos"], r["ovrl_mos"]


def score(job):
    far, mic, out = load(job["far"]), load(job["mic"]), load(job["out"])
    n = min(len(far), len(mic), len(out))
    far, mic, out = far[:n], mic[:n], out[:n]
    result = {"id": job.get("id")}
    st = job.get("far_single_talk_s") or []
    dt = job.get("double_talk_s")
    nst = job.get("near_single_talk_s") or []
    if st or dt or nst:
        result["aecmos_echo_st"], _ = score_segments("st", st, far, mic, out)
        result["aecmos_echo_dt"], result["aecmos_deg_dt"] = score_segments("dt", [dt] if dt else [], far, mic, out)
        _, result["aecmos_deg_nst"] = score_segments("nst", nst, far, mic, out)
    else:
        from speechmos import aecmos as model
        r = model.run({"lpb": far, "mic": mic, "enh": out}, RATE)
        result["aecmos_echo"], result["aecmos_deg"] = r["echo_mos"], r["deg_mos"]
    speech = cut(out, dt) if dt and dt[1] - dt[0] >= MIN_SECONDS else out
    result["dnsmos_sig"], result["dnsmos_bak"], result["dnsmos_ovrl"] = dnsmos(speech)
    return {k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in result.items() if v is not None}


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    import logging
    logging.disable(logging.WARNING)
    with open(sys.argv[1]) as f:
        jobs = json.load(f)
    for job in jobs:
        try:
            print(json.dumps(score(job)), flush=True)
        except Exception as e:  # one bad job must not lose the others' scores
            print(json.dumps({"id": job.get("id"), "error": str(e)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
