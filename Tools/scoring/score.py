#!/usr/bin/env python3
"""Scores degraded speech against a reference: PESQ (wideband or narrowband) and STOI.

Usage: score.py REFERENCE.wav DEGRADED.wav [--mode wb|nb] [--max-lag-ms MS]

Prints one JSON object: {"pesq": .., "stoi": .., "lag_samples": .., "sample_rate": ..}.
Both files are resampled to 16 kHz (8 kHz for --mode nb) and mixed to mono; the
degraded signal is aligned to the reference by cross-correlation before STOI
(PESQ aligns internally). Used by the benches, never by the library.
"""
import argparse
import json
import sys

import numpy as np
from scipy.io import wavfile
from scipy.signal import correlate, resample_poly


def load(path, rate):
    sr, x = wavfile.read(path)
    if x.dtype == np.int16:
        x = x.astype(np.float64) / 32768.0
    elif x.dtype == np.int32:
        x = x.astype(np.float64) / 2147483648.0
    else:
        x = x.astype(np.float64)
    if x.ndim > 1:
        x = x.mean(axis=1)
    if sr != rate:
        g = np.gcd(sr, rate)
        x = resample_poly(x, rate // g, sr // g)
    return x


def align(ref, deg, max_lag):
    """Shifts deg so it lines up with ref (positive lag: deg is late)."""
    n = min(len(ref), len(deg))
    c = correlate(deg[:n], ref[:n], mode="full", method="fft")
    mid = n - 1
    lo, hi = max(0, mid - max_lag), min(len(c), mid + max_lag + 1)
    lag = int(np.argmax(c[lo:hi]) + lo - mid)
    if lag > 0:
        deg = deg[lag:]
    elif lag < 0:
        deg = np.concatenate([np.zeros(-lag), deg])
    m = min(len(ref), len(deg))
    return ref[:m], deg[:m], lag


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("reference")
    ap.add_argument("degraded")
    ap.add_argument("--mode", choices=["wb", "nb"], default="wb")
    ap.add_argument("--max-lag-ms", type=float, default=500)
    a = ap.parse_args()

    from pesq import pesq
    from pystoi import stoi

    rate = 16000 if a.mode == "wb" else 8000
    ref, deg = load(a.reference, rate), load(a.degraded, rate)
    ref, deg, lag = align(ref, deg, int(a.max_lag_ms * rate / 1000))
    result = {
        "pesq": float(pesq(rate, ref, deg, a.mode)),
        "stoi": float(stoi(ref, deg, rate, extended=False)),
        "lag_samples": lag,
        "sample_rate": rate,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    sys.exit(main())
