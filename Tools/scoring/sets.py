#!/usr/bin/env python3
"""The voice-processing targets on the tuning set and the test set side by side.

Reads the suite.json of `aecbench suite --set tuning` and of `aecbench suite --set test` (AECMOS
and PESQ included) and prints, per scenario and set, the echo MOS over far-end single talk and
the degradation MOS over double talk of CallAudio / SpeexDSP / AEC3, and whether CallAudio meets
the targets: echo MOS >= AEC3's - 0.05 and >= 4.5; degradation MOS >= SpeexDSP's - 0.05; echo-free
double talk PESQ-WB >= 3.2 and within 0.3 of the far end silent.

    Tools/scoring/sets.py out/aecbench-tuning/suite.json out/aecbench-test/suite.json
"""
import json
import sys


def fmt(value):
    return "-" if value is None else f"{value:.2f}"


def rows(path):
    scenarios = json.load(open(path))["scenarios"]
    for name in sorted(scenarios):
        engines = scenarios[name]
        get = lambda engine, key: engines.get(engine, {}).get(key)
        echo = [get(e, "aecmos_echo_st") for e in ("callaudio", "speex", "aec3")]
        deg = [get(e, "aecmos_deg_dt") for e in ("callaudio", "speex", "aec3")]
        checks = []
        if echo[0] is not None and not name.startswith("echofree"):
            ok = echo[0] >= 4.5 and (echo[2] is None or echo[0] >= echo[2] - 0.05)
            checks.append(("echo" if ok else "ECHO"))
        if deg[0] is not None and deg[1] is not None:
            checks.append("deg" if deg[0] >= deg[1] - 0.05 else "DEG")
        if name.startswith("echofree"):
            pesq, silent = get("callaudio", "pesq"), get("callaudio", "pesq_far_silent")
            if pesq is not None and silent is not None:
                checks.append("pesq" if pesq >= 3.2 and silent - pesq <= 0.3 else "PESQ")
                checks.append(f"PESQ-WB {pesq:.2f} (far end silent {silent:.2f})")
        yield name, echo, deg, checks


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    print("| scenario | set | echo MOS C / S / A | degradation MOS C / S / A | targets (lower case: met) |")
    print("|---|---|---|---|---|")
    tables = {label: {n: (e, d, c) for n, e, d, c in rows(path)} for label, path in zip(("tuning", "test"), sys.argv[1:])}
    for name in sorted(set(tables["tuning"]) | set(tables["test"])):
        for label in ("tuning", "test"):
            if name not in tables[label]:
                continue
            echo, deg, checks = tables[label][name]
            print(f"| {name} | {label} | {' / '.join(map(fmt, echo))} | {' / '.join(map(fmt, deg))} | {', '.join(checks)} |")


if __name__ == "__main__":
    main()
