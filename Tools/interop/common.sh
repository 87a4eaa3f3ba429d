# Shared by the scripts of Tools/interop (sourced; not run on its own).
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

# The checks of a call with baresip, for Tools/interop/srtp and Tools/interop/codecs. They use
# $voicecall, $callbench, $work, $seconds, $speech (ours, 16 kHz), $other (baresip's, 16 kHz),
# $sent and $other48 (what each side sends: make_sent_speech), $pki (test-pki's folder), $pesq (1:
# score every direction into the array scores), and count into $passed and $failed.
# baresip_extra: more options for sip-baresip (for example --codec pcmu).
baresip_extra=()
# Silence each side sends after its speech. A recording ends with the call, and a call that ends
# as the speech does leaves the speech's last 60 to 130 ms (the far end's buffers) out of it,
# which `score` would compare with silence: the call outlasts the speech instead.
tail_seconds=1
# make_sent_speech NAME: $sent ($speech, then $tail_seconds of silence) and $other48 ($other the
# same, as the 48 kHz stereo file sip-baresip takes).
make_sent_speech() {
  sent="$work/sent.wav"
  other48="$work/other48.wav"
  ffmpeg -nostdin -loglevel error -y -i "$speech" -af "apad=pad_dur=$tail_seconds" -c:a pcm_s16le "$sent" \
    && ffmpeg -nostdin -loglevel error -y -i "$other" -af "apad=pad_dur=$tail_seconds" -ac 2 -ar 48000 \
      -c:a pcm_s16le "$other48" || { echo "$1: cannot make the speech the calls send" >&2; exit 2; }
}
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; [ -f "${2:-}" ] && sed 's/^/    /' "$2" | tail -8; failed=$((failed + 1)); }

# check NAME RECEIVED LOG REFERENCE: the received speech correlates >= 0.8 with the reference.
check() {
  local name="$1" received="$2" log="$3" reference="$4" line
  if [ -s "$received" ] && line="$("$callbench" compare "$reference" "$received" --min-correlation 0.8 --label "$name" 2>&1)"; then
    pass "$line"
  else
    fail "${line:-$name: no audio received}" "$log"
  fi
}
baresip_checks() {
  check "$1: baresip -> voicecall" "$3" "$2" "$other"
  local decoded
  decoded="$(ls "$4"/dump-*-dec.wav 2>/dev/null | head -1)"
  check "$1: voicecall -> baresip" "${decoded:-$4/none.wav}" "$2" "$speech"
  [ "$pesq" = 1 ] && scores+=("$1|$(score "$other" "$3")|$(score "$speech" "${decoded:-$4/none.wav}")")
  return 0
}
# score REFERENCE RECEIVED: PESQ-WB of RECEIVED aligned to REFERENCE (16 kHz), or nan.
score() {
  local aligned="$work/aligned.wav" mono="$work/mono16.wav"
  ffmpeg -nostdin -loglevel error -y -i "$2" -ac 1 -ar 16000 -c:a pcm_s16le "$mono" 2>/dev/null || { echo nan; return; }
  "$callbench" compare "$1" "$mono" --aligned-out "$aligned" >/dev/null 2>&1 || { echo nan; return; }
  Tools/score "$1" "$aligned" 2>/dev/null | grep -o '"pesq": *[0-9.]*' | grep -o '[0-9.]*$' || echo nan
}
scores=()
# baresip_calls N NAME MEDIAENC TRANSPORT PORT TARGET [voicecall listen options...]
baresip_calls() {
  local n="$1" name="$2" mediaenc="$3" transport="$4" port="$5" target="$6"
  shift 6
  timeout $((seconds + 40)) "$voicecall" listen --sip "127.0.0.1:$port" --transport "$transport" "$@" --input "$sent" \
    --output "$work/$n-heard.wav" --no-voice-processing --wait 30 --seconds $((seconds + 20)) --json > "$work/$n.log" 2>&1 &
  local listener=$!; pids+=("$listener")
  wait_for "$work/$n.log" "^listening on"
  Tools/interop/sip-baresip caller "$target" --port $((port + 4)) --source "$other48" --transport "$transport" \
    --tls-ca "$pki/ca.pem" --mediaenc "$mediaenc" "${baresip_extra[@]}" --seconds $((seconds + 5)) --dir "$work/$n-baresip" >> "$work/$n.log" 2>&1
  wait "$listener"
  baresip_checks "$name" "$work/$n.log" "$work/$n-heard.wav" "$work/$n-baresip"
}
# voicecall_calls N NAME MEDIAENC TRANSPORT PORT TARGET [voicecall call options...]
voicecall_calls() {
  local n="$1" name="$2" mediaenc="$3" transport="$4" port="$5" target="$6"
  shift 6
  Tools/interop/sip-baresip callee --port "$port" --source "$other48" --transport "$transport" --tls-ca "$pki/ca.pem" \
    --mediaenc "$mediaenc" "${baresip_extra[@]}" --seconds $((seconds + 10)) --dir "$work/$n-baresip" > "$work/$n.log" 2>&1 &
  local callee=$!; pids+=("$callee")
  wait_for "$work/$n-baresip/baresip.log" "baresip is ready|Listening on"
  timeout $((seconds + 30)) "$voicecall" call "$target" "$@" --input "$sent" --output "$work/$n-heard.wav" \
    --no-voice-processing --seconds $((seconds + tail_seconds)) --json >> "$work/$n.log" 2>&1
  wait "$callee"
  baresip_checks "$name" "$work/$n.log" "$work/$n-heard.wav" "$work/$n-baresip"
}
