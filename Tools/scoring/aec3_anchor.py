#!/usr/bin/env python3
"""Checks how aecbench runs WebRTC AEC3: reruns it on the suite's scenarios with other settings and scores each.

Usage: .venv/bin/python Tools/scoring/aec3_anchor.py SUITE_DIR [--only base,doubletalk] [--seeds 1,2,3]
           [--variants harness,ns0,...] [--ser-shift 0,10] [--no-mos]

SUITE_DIR is `aecbench suite --all-wavs --out-dir SUITE_DIR`'s folder (`<scenario>/seed<N>/` with
far.wav, mic.wav, echo.wav, near.wav, noise.wav, scenario.json). Variants (Tools/scoring/aec3.py's
`process`):
  harness        what aecbench runs: NS high, stream delay 0 reported once, far end then microphone
  ns0, ns1, ns3  noise suppression off, moderate, very high
  delay          the scenario's bulk delay reported as the stream delay with every frame
  no-delay       no stream delay reported at all
  agc            the wheel's AGC1 (adaptive digital) on, as a browser runs an AGC
  capture-first  each microphone frame fed before its far-end frame
  passthrough    the microphone itself (what the scores give with nothing removed)
--ser-shift D remixes the microphone with the echo and the noise D dB lower (the near end, and the
echo-to-noise ratio, as they were): SER raised by D.

Scores, as aecbench does: PESQ-WB of the double talk against the clean near end (Tools/score's
alignment), AECMOS echo MOS over far-end single talk after 2 s, echo and degradation MOS over double
talk (Tools/scoring/mos.py). One JSON line per run, then medians over seeds.
"""
import argparse
import json
import os
import sys
import tempfile

import numpy as np
from scipy.io import wavfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

VARIANTS = {
    "harness": {},
    "ns0": {"ns": 0},
    "ns1": {"ns": 1},
    "ns3": {"ns": 3},
    "delay": {"stream_delay_ms": "scenario"},
    "no-delay": {"stream_delay_ms": None},
    "agc": {"agc": True},
    "capture-first": {"capture_first": True},
    "passthrough": None,
}
KEYS = ("pesq", "aecmos_deg_dt", "aecmos_echo_dt", "aecmos_echo_st")


def read(path):
    rate, x = wavfile.read(path)
    if x.dtype != np.int16 or x.ndim != 1:
        sys.exit(f"{path}: expected 16-bit mono")
    return rate, x


def pesq_double_talk(near, out, segment, rate):
    from pesq import pesq
    from score import align
    a, b = (int(round(t * rate)) for t in segment)
    ref, deg, _ = align(near[a:b] / 32768.0, out[a:b] / 32768.0, rate // 2)
    return float(pesq(rate, ref, deg, "wb"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("suite")
    ap.add_argument("--only", default="base,doubletalk")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--variants", default="harness")
    ap.add_argument("--ser-shift", default="0")
    ap.add_argument("--no-mos", action="store_true")
    a = ap.parse_args()
    for v in a.variants.split(","):
        if v not in VARIANTS:
            ap.error(f"unknown variant {v} (one of {', '.join(VARIANTS)})")
    import logging
    logging.disable(logging.WARNING)
    import aec3
    import mos

    work = tempfile.mkdtemp(prefix="aec3-anchor-")
    rows = []
    for scenario in a.only.split(","):
        for seed in a.seeds.split(","):
            folder = os.path.join(a.suite, scenario, f"seed{seed}")
            meta = json.load(open(os.path.join(folder, "scenario.json")))
            rate, far = read(os.path.join(folder, "far.wav"))
            _, near = read(os.path.join(folder, "near.wav"))
            dt = meta.get("double_talk_s")
            single = [[max(s, 2.0), e] for s, e in meta.get("far_single_talk_s", []) if e > max(s, 2.0)]
            for shift in (float(x) for x in a.ser_shift.split(",")):
                if shift:
                    _, echo = read(os.path.join(folder, "echo.wav"))
                    _, noise = read(os.path.join(folder, "noise.wav"))
                    mixed = (echo.astype(np.float64) + noise) * 10 ** (-shift / 20) + near
                    mic = np.clip(np.round(mixed), -32768, 32767).astype(np.int16)
                    mic_path = os.path.join(work, "mic.wav")
                    wavfile.write(mic_path, rate, mic)
                else:
                    mic_path = os.path.join(folder, "mic.wav")
                    _, mic = read(mic_path)
                for v in a.variants.split(","):
                    options = VARIANTS[v]
                    if options is None:
                        out = mic.copy()
                    else:
                        options = dict(options)
                        if options.get("stream_delay_ms") == "scenario":
                            options["stream_delay_ms"] = int(round(meta.get("bulk_delay_ms", 0)))
                        out = aec3.process(far, mic, rate, **options)
                    out_path = os.path.join(work, "out.wav")
                    wavfile.write(out_path, rate, out)
                    row = {"scenario": scenario, "seed": int(seed), "ser_shift_db": shift, "variant": v}
                    if dt:
                        row["pesq"] = pesq_double_talk(near, out, dt, rate)
                    if not a.no_mos:
                        s = mos.score({"far": os.path.join(folder, "far.wav"), "mic": mic_path, "out": out_path,
                                       "far_single_talk_s": single, "double_talk_s": dt})
                        row.update({k: s[k] for k in KEYS if k in s})
                    print(json.dumps(row), flush=True)
                    rows.append(row)

    print("\nmedians over seeds: scenario, SER shift (dB), variant, " + ", ".join(KEYS))
    groups = {}
    for r in rows:
        groups.setdefault((r["scenario"], r["ser_shift_db"], r["variant"]), []).append(r)
    for (scenario, shift, v), runs in groups.items():
        cells = []
        for k in KEYS:
            xs = [r[k] for r in runs if k in r]
            cells.append(f"{np.median(xs):.2f}" if xs else "-")
        print(f"{scenario:11s} {shift:+5.0f}  {v:14s} " + "  ".join(cells))


if __name__ == "__main__":
    main()
