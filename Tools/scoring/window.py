#!/usr/bin/env python3
"""AECMOS echo MOS over one stretch of far-end single talk, for each output in a run's folder:
where in a call the echo score goes.

Usage (after `aecbench suite --all-wavs` or `Tools/scoring/sweep.py --out-dir DIR`, which keep
each run's far.wav, mic.wav and outputs):

    .venv/bin/python Tools/scoring/window.py FOLDER START END [OUT.wav ...]

START and END in seconds (at least 2 s apart, as for mos.py); the outputs default to every
out-*.wav and out_*.wav in FOLDER. One line per output: its name and the echo MOS.
"""
import glob
import logging
import os
import sys

import mos


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    folder = sys.argv[1]
    try:
        start, end = float(sys.argv[2]), float(sys.argv[3])
    except ValueError:
        sys.exit(f"window.py: START and END must be seconds, not {sys.argv[2]!r} and {sys.argv[3]!r}")
    if end - start < mos.MIN_SECONDS:
        sys.exit(f"window.py: the stretch must be at least {mos.MIN_SECONDS} s long")
    outputs = sys.argv[4:] or sorted(glob.glob(os.path.join(folder, "out[-_]*.wav")))
    if not outputs:
        sys.exit(f"window.py: no out-*.wav or out_*.wav in {folder}")
    logging.disable(logging.WARNING)
    far, mic = mos.load(os.path.join(folder, "far.wav")), mos.load(os.path.join(folder, "mic.wav"))
    for path in outputs:
        echo, _ = mos.score_segments("st", [[start, end]], far, mic, mos.load(path))
        if echo is None:  # the stretch runs past the end of the recordings
            sys.exit(f"window.py: {os.path.basename(path)} holds less than {mos.MIN_SECONDS} s from {start:g} s")
        print(f"{os.path.basename(path)}: echo MOS {echo:.2f} over {start:g} to {end:g} s")


if __name__ == "__main__":
    main()
