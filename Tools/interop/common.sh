# Shared by Tools/interop/run and Tools/interop/loss-bench (sourced; not run on its own).
# Each function takes the caller's name for its messages.

# build_tools NAME [CONFIGURATION]: builds voicecall and callbench (debug by default;
# SCRATCH=path for swift build --scratch-path) and sets $voicecall and $callbench to their paths.
build_tools() {
  voicecall=$(built_product "$1" voicecall "${2:-debug}") || exit 2
  callbench=$(built_product "$1" callbench "${2:-debug}") || exit 2
}

# built_product NAME PRODUCT CONFIGURATION [SWIFTC_FLAG...]: builds PRODUCT (SCRATCH honoured)
# and prints its path; fails (status 2) if the build does.
built_product() {
  local name="$1" product="$2" build=(swift build -c "$3") flag
  shift 3
  for flag in "$@"; do build+=(-Xswiftc "$flag"); done
  [ -n "${SCRATCH:-}" ] && build+=(--scratch-path "$SCRATCH")
  "${build[@]}" --product "$product" >&2 || { echo "$name: build failed" >&2; exit 2; }
  echo "$("${build[@]}" --show-bin-path)/$product"
}

# make_work NAME: a scratch folder in $work, removed at exit with every process in $pids killed.
make_work() {
  work="$(mktemp -d "/tmp/callaudio-$1.XXXXXX")"
  pids=()
  trap 'for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null; done; rm -rf "$work"' EXIT
}

# cut_speech NAME SECONDS OUT: the first SECONDS of $SPEECH (default: the English fixture) as
# 16 kHz mono 16-bit WAV, so every check lasts about that long.
cut_speech() {
  ffmpeg -nostdin -loglevel error -y -i "${SPEECH:-Tests/Fixtures/speech/en_f_congrats_16k.wav}" -t "$2" \
    -ac 1 -ar 16000 -c:a pcm_s16le "$3" || { echo "$1: cannot cut the speech excerpt" >&2; exit 2; }
}

# stop PID: one SIGINT (GStreamer and ffmpeg then finish their WAV), up to 10 s, then SIGKILL.
stop() {
  local pid="$1"
  kill -INT "$pid" 2>/dev/null
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null
}

# wait_for FILE PATTERN [SECONDS]: until a line of FILE matches PATTERN (grep -E), up to
# SECONDS (default 10); false when it never does. The one way a check waits for a peer to start.
wait_for() {
  local file="$1" pattern="$2" deadline=$((SECONDS + ${3:-10}))
  until grep -qE "$pattern" "$file" 2>/dev/null; do
    [ "$SECONDS" -ge "$deadline" ] && { echo "wait_for: no '$pattern' in $file" >&2; return 1; }
    sleep 0.05
  done
}

# wait_for_udp PORT [SECONDS]: until something is bound to UDP port PORT (IPv4 or IPv6), for a
# peer that says nothing when it is ready (GStreamer, ffmpeg, linphonec).
wait_for_udp() {
  local hex deadline=$((SECONDS + ${2:-10}))
  hex=$(printf '%04X' "$1")
  until awk -v p=":$hex" 'FNR > 1 && substr($2, length($2) - 4) == p { found = 1 } END { exit !found }' \
      /proc/net/udp /proc/net/udp6 2>/dev/null; do
    [ "$SECONDS" -ge "$deadline" ] && { echo "wait_for_udp: nothing on UDP port $1" >&2; return 1; }
    sleep 0.05
  done
}
