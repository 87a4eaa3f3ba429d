#!/usr/bin/env python3
"""Runs WebRTC AEC3 over a far-end/microphone WAV pair, for aecbench's side-by-side table.

Usage:
  aec3.py --far FAR.wav --mic MIC.wav --out OUT.wav [--ns 0|1|2|3] [--stream-delay-ms MS]
  aec3.py --install        # builds the aec-audio-processing wheel into the repository's .venv

AEC3 comes from the `aec-audio-processing` package (WebRTC audio processing 2.x). Its
AudioProcessor sets up the audio processing module as a browser does: AEC3 with its default
EchoCanceller3Config (not the mobile canceller), the high-pass filter that AEC3 enforces, noise
suppression (level high by default, as Chrome sets it); AGC is off here so that ERLE means the
same for every engine. Both files are 16-bit mono at the same rate (16 kHz in the bench); both
streams are declared at that rate, mono. The far end is fed with ProcessReverseStream and the
microphone with ProcessStream, 10 ms at a time, as a real-time client would; the output is
ProcessStream's int16 output. A stream delay of 0 is reported once (AEC3 uses a reported delay
only as its starting alignment after a reset; it finds the delay itself); --stream-delay-ms
reports a delay with every frame instead. Docs/aecbench.md ("The AEC3 anchor") has what was
checked; Tools/scoring/aec3_anchor.py reruns the checks.

Prints one JSON object: {"seconds": processing time, "frames": 10 ms frames}.
Used by Tools/aecbench only; never by the library.
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV = os.path.join(ROOT, ".venv")


def install():
    """Creates .venv if needed and builds aec-audio-processing into it (a few minutes, once)."""
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
    pip = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    # The package's setup.py calls meson and ninja from PATH: install them first.
    subprocess.check_call(pip + ["meson", "ninja"])
    env = dict(os.environ, PATH=os.path.join(VENV, "bin") + os.pathsep + os.environ.get("PATH", ""))
    requirements = os.path.join(ROOT, "Tools", "scoring", "requirements-aec3.txt")
    subprocess.check_call(pip + ["-r", requirements], env=env)


def process(far, mic, rate, ns=2, stream_delay_ms=0, capture_first=False, agc=False):
    """AEC3 over int16 mono arrays at `rate`; returns the int16 output (whole 10 ms frames).

    `stream_delay_ms`: 0 reports 0 once, before the first frame; more reports it with every frame;
    None reports nothing. `capture_first` feeds each capture frame before its far-end frame (wrong
    for a real-time client; aec3_anchor.py uses it to show that the order matters). `agc` turns on
    the wheel's AGC1 (adaptive digital), as a browser runs an AGC.
    """
    import numpy as np
    from aec_audio_processing import AudioProcessor

    # Never enable_aec=False with nothing else on: the module then leaves the output untouched
    # and the wheel returns zeros.
    processor = AudioProcessor(enable_aec=True, enable_ns=ns > 0, ns_level=max(0, ns), enable_agc=agc,
                               agc_mode=1, enable_vad=False)
    processor.set_stream_format(rate, 1)
    processor.set_reverse_stream_format(rate, 1)
    if stream_delay_ms is not None:
        processor.set_stream_delay(stream_delay_ms)
    frame = rate // 100
    count = min(len(far), len(mic)) // frame * frame
    out = np.zeros(count, dtype=np.int16)
    for start in range(0, count, frame):
        if not capture_first:
            processor.process_reverse_stream(far[start:start + frame].tobytes())
        processed = processor.process_stream(mic[start:start + frame].tobytes())
        out[start:start + frame] = np.frombuffer(processed, dtype=np.int16)[:frame]
        if capture_first:
            processor.process_reverse_stream(far[start:start + frame].tobytes())
        if stream_delay_ms:
            processor.set_stream_delay(stream_delay_ms)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--far")
    ap.add_argument("--mic")
    ap.add_argument("--out")
    ap.add_argument("--ns", type=int, default=2, help="noise suppression level 0..3, 0 off (default 2, high)")
    ap.add_argument("--stream-delay-ms", type=int, default=0)
    ap.add_argument("--install", action="store_true")
    a = ap.parse_args()
    if a.install:
        install()
        return
    if not (a.far and a.mic and a.out):
        ap.error("--far, --mic and --out are required")

    import numpy as np
    from scipy.io import wavfile

    rate, far = wavfile.read(a.far)
    mic_rate, mic = wavfile.read(a.mic)
    if rate != mic_rate or far.dtype != np.int16 or mic.dtype != np.int16 or far.ndim != 1 or mic.ndim != 1:
        sys.exit("aec3.py: far and mic must be 16-bit mono WAV at the same rate")
    started = time.perf_counter()
    out = process(far, mic, rate, ns=a.ns, stream_delay_ms=a.stream_delay_ms)
    seconds = time.perf_counter() - started
    wavfile.write(a.out, rate, out)
    print(json.dumps({"seconds": seconds, "frames": len(out) // (rate // 100)}))


if __name__ == "__main__":
    main()
