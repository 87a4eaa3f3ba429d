#!/usr/bin/env python3
"""Runs CallAudio and plain SpeexDSP side by side on scenarios outside the suite's.

Usage (from the repository root, after `swift build -c release --product aecbench` and
`Tools/score` has made the venv):

    .venv/bin/python Tools/scoring/sweep.py [--only drift100,drift-100] [--seeds 2,4] [--out-dir out/sweep] [--mos] [--all-pairs] [--tuning FILE]

Each variant changes one thing from the suite's base scenario (RT60 0.3 s, 5 ms delay, SER 0 dB,
ENR 40 dB, double talk 8-14 s). Seed n pairs the far and near talkers differently from the suite
(`PAIRS[n % 3]`), so the sweep also hears talkers in roles the suite does not give them. One line
per run on stdout, and every run's metrics as JSON lines in OUT_DIR/results.jsonl. `--mos` adds
AECMOS (echo MOS over far-end single talk, degradation MOS over double talk; `aecbench process
--mos`, which needs the venv of Tools/scoring/mos.py).
"""
import argparse
import json
import os
import subprocess
import wave

SPEECH = "Tests/Fixtures/speech/"
AECBENCH = ".build/release/aecbench"
PAIRS = [("fr_f_msginstruct_16k.wav", "en_m_librivox_16k.wav"),
         ("en_m_librivox_16k.wav", "en_f_echotest_16k.wav"),
         ("fr_f_congrats_16k.wav", "en_f_congrats_16k.wav")]
VOICES = sorted({voice for pair in PAIRS for voice in pair})
VARIANTS = {
    "base": [],
    "rt60_0.1": ["--rt60", "0.1"], "rt60_0.6": ["--rt60", "0.6"], "rt60_0.9": ["--rt60", "0.9"],
    "delay0": ["--delay-ms", "0"], "delay40": ["--delay-ms", "40"], "delay300": ["--delay-ms", "300"],
    "drift-200": ["--drift-ppm=-200"], "drift-100": ["--drift-ppm=-100"], "drift-50": ["--drift-ppm=-50"],
    "drift100": ["--drift-ppm", "100"], "drift150": ["--drift-ppm", "150"],
    "ser-10": ["--ser-db=-10"], "ser10": ["--ser-db", "10"],
    "enr20": ["--enr-db", "20"], "enr60": ["--enr-db", "60"],
    "hard": ["--nonlinear", "hard"],
    "pathchange_dt": ["--path-change-s", "12", "--double-talk", "10,14"],
    "early_dt": ["--double-talk", "1,5"], "early_dt2": ["--double-talk", "2,6"],
    "early_dt_delay150": ["--double-talk", "1,5", "--delay-ms", "150"],
    "rate48k": ["--rate", "48000"],
    "echofree": ["--no-echo-path", "--double-talk", "1,19"],
}
KEYS = ["erle_db", "linear_erle_db", "pesq", "post_double_talk_erle_db", "convergence_s",
        "estimated_delay_ms", "estimated_drift_ppm", "canceller_resets", "aecmos_echo_st", "aecmos_deg_dt"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated variants (default: all)")
    parser.add_argument("--seeds", default="2,4")
    parser.add_argument("--out-dir", default="out/sweep")
    parser.add_argument("--mos", action="store_true", help="also score AECMOS (slower)")
    parser.add_argument("--all-pairs", action="store_true",
                        help="every ordered pair of the tuning voices per seed, not one pair per seed")
    parser.add_argument("--tuning", help="CallAudio's tuning, JSON (aecbench process --tuning)")
    args = parser.parse_args()
    only = [v for v in args.only.split(",") if v]
    unknown = [v for v in only if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variants {unknown}; known: {', '.join(VARIANTS)}")
    os.makedirs(args.out_dir, exist_ok=True)
    results = open(os.path.join(args.out_dir, "results.jsonl"), "a")
    losses = []
    for name, options in VARIANTS.items():
        if only and name not in only:
            continue
        for seed in (int(s) for s in args.seeds.split(",")):
            pairs = ([(f, n) for f in VOICES for n in VOICES if f != n] if args.all_pairs
                     else [PAIRS[seed % len(PAIRS)]])
            for far, near in pairs:
                folder = os.path.join(args.out_dir, f"{name}_seed{seed}" + (f"_{talker(far)}_{talker(near)}" if args.all_pairs else ""))
                row = run(name, options, seed, far, near, folder, args)
                results.write(json.dumps(row) + "\n")
                results.flush()
                print(line(row, args.mos), flush=True)
                c = row["callaudio"]
                if c.get("pesq_far_silent") is not None and c.get("pesq") is not None:
                    losses.append(c["pesq_far_silent"] - c["pesq"])
    if losses:
        print(f"echo-free runs: {len(losses)}, CallAudio's PESQ-WB under its far-end-silent score by "
              f"{sum(losses) / len(losses):.2f} on average, by over 0.3 in {sum(x > 0.3 for x in losses)}")


def run(name, options, seed, far, near, folder, args):
    """Simulates one scenario and runs both engines on it; with no echo path, CallAudio also
    with the far end silent (the PESQ-WB the near end keeps when nothing plays)."""
    subprocess.run([AECBENCH, "simulate", "--far", SPEECH + far, "--near", SPEECH + near,
                    "--seed", str(seed), "--out-dir", folder] + options, check=True, capture_output=True)
    row = {"variant": name, "seed": seed, "far": far, "near": near}
    for engine in ["callaudio", "speex"]:
        row[engine] = process(folder, f"{folder}/far.wav", engine, args, args.mos)
    if "--no-echo-path" in options:
        silent = f"{folder}/far_silent.wav"
        with wave.open(f"{folder}/far.wav") as w:
            params, frames = w.getparams(), w.getnframes()
        with wave.open(silent, "wb") as w:
            w.setparams(params)
            w.writeframes(bytes(frames * params.sampwidth * params.nchannels))
        row["callaudio"]["pesq_far_silent"] = process(folder, silent, "callaudio", args, mos=False)["pesq"]
    return row


def talker(wav):
    return wav.removesuffix("_16k.wav")


def process(folder, far, engine, args, mos):
    """One engine's metrics on the scenario in `folder`, with `far` as the far end."""
    run = subprocess.run([AECBENCH, "process", "--far", far, "--mic", f"{folder}/mic.wav", "--scenario", folder,
                          "--out", f"{folder}/out_{engine}.wav", "--engine", engine, "--pesq", "--json"]
                         + (["--mos"] if mos else [])
                         + (["--tuning", args.tuning] if args.tuning and engine == "callaudio" else []),
                         capture_output=True, text=True, check=True)
    metrics = json.loads(run.stdout.strip().splitlines()[-1])
    return {k: metrics.get(k) for k in KEYS}


def line(row, mos=False):
    def f(x):
        return "    -" if x is None else f"{x:5.1f}" if abs(x) >= 10 else f"{x:5.2f}"

    def scores(m):
        return f" MOS echo {f(m['aecmos_echo_st'])} deg {f(m['aecmos_deg_dt'])}" if mos else ""
    c, s = row["callaudio"], row["speex"]
    silent = f" (far silent {f(c['pesq_far_silent'])})" if "pesq_far_silent" in c else ""
    return (f"{row['variant']:13s} seed {row['seed']} {talker(row['far'])}/{talker(row['near'])}  CallAudio ERLE {f(c['erle_db'])} lin {f(c['linear_erle_db'])}"
            f" PESQ {f(c['pesq'])}{silent}{scores(c)} ppm {f(c['estimated_drift_ppm'])} resets {c['canceller_resets']}"
            f"  |  SpeexDSP ERLE {f(s['erle_db'])} lin {f(s['linear_erle_db'])} PESQ {f(s['pesq'])}{scores(s)}")


if __name__ == "__main__":
    main()
