#!/usr/bin/env python3
"""How much the segment decides: AECMOS degradation MOS over each run's whole double talk, and
the length-weighted mean over its thirds, for CallAudio and plain SpeexDSP.

Usage (after `Tools/scoring/sweep.py --out-dir DIR`, which keeps every run's WAVs):

    .venv/bin/python Tools/scoring/segments.py [DIR]          (default out/sweep)

One line per run with double talk long enough to cut in thirds of at least 2 s, then the
medians and how many runs are within 0.05 of SpeexDSP's score (or above it) each way.
"""
import glob
import json
import os
import statistics
import sys

import mos

ENGINES = ("callaudio", "speex")


def scores(folder):
    """(whole, thirds) degradation MOS per engine, or None when the double talk is too short."""
    with open(os.path.join(folder, "scenario.json")) as f:
        talk = json.load(f).get("double_talk_s")
    if not talk or (talk[1] - talk[0]) / 3 < mos.MIN_SECONDS:
        return None
    a, b = talk
    thirds = [[a + i * (b - a) / 3, a + (i + 1) * (b - a) / 3] for i in range(3)]
    far, mic = mos.load(f"{folder}/far.wav"), mos.load(f"{folder}/mic.wav")
    result = {}
    for engine in ENGINES:
        out = mos.load(f"{folder}/out_{engine}.wav")
        result[engine] = (mos.score_segments("dt", [talk], far, mic, out)[1],
                          mos.score_segments("dt", thirds, far, mic, out)[1])
    return result


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "out/sweep"
    rows = []
    for folder in sorted(glob.glob(os.path.join(root, "*_seed*"))):
        r = scores(folder)
        if r is None:
            continue
        rows.append(r)
        print(os.path.basename(folder), " ".join(f"{e} {r[e][0]:.2f} / {r[e][1]:.2f}" for e in ENGINES), flush=True)
    if not rows:
        sys.exit(f"segments.py: no run in {root} has double talk of 6 s or more (run sweep.py --out-dir {root} first)")
    for i, name in enumerate(("whole", "thirds")):
        c = [r["callaudio"][i] for r in rows]
        s = [r["speex"][i] for r in rows]
        near = sum(x >= y - 0.05 for x, y in zip(c, s))
        print(f"{name}: median CallAudio {statistics.median(c):.3f}, SpeexDSP {statistics.median(s):.3f}; "
              f"CallAudio within 0.05 of SpeexDSP or above in {near} of {len(rows)}")


if __name__ == "__main__":
    main()
