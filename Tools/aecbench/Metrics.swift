import AudioAnalysis

/// The bench's measurements of one processed scenario. Every number the bench reports comes
/// from here, for every engine alike.
struct Metrics: Codable {
    /// Full chain and linear stage ERLE over far-end single talk after the first 2 s, dB.
    var erleDB: Double?
    var linearERLEDB: Double?
    /// Seconds from the echo's onset until full-chain ERLE reaches 20 dB and stays there for 1 s.
    var convergenceS: Double?
    var linearConvergenceS: Double?
    /// Full-chain ERLE over the 2 s after double talk ends, dB.
    var postDoubleTalkERLEDB: Double?
    /// Seconds from the echo-path change until full-chain ERLE is back to 20 dB for 1 s.
    var pathChangeRecoveryS: Double?
    var linearPathChangeRecoveryS: Double?
    /// Lag of the output's near-end speech behind the microphone's, ms.
    var addedDelayMs: Double?
    var pesq: Double?
    var stoi: Double?
    /// PESQ-WB of the same near end processed with the far end silent: what the double talk's
    /// score is compared with where the microphone hears no echo (the `echofree` scenario).
    var pesqFarSilent: Double?
    /// AECMOS (`Tools/scoring/mos.py`): echo MOS over far-end single talk after 2 s; echo and
    /// degradation MOS over double talk; blind echo and degradation MOS over a whole recording
    /// without ground truth.
    var aecmosEchoST: Double?
    var aecmosEchoDT: Double?
    var aecmosDegDT: Double?
    var aecmosEcho: Double?
    var aecmosDeg: Double?
    /// DNSMOS P.835 of the output over double talk (the whole output without it).
    var dnsmosSIG: Double?
    var dnsmosBAK: Double?
    var dnsmosOVRL: Double?
    var estimatedDelayMs: Double?
    var estimatedDriftPPM: Double?
    var realtimeFactor: Double?
    var cancellerResets: Int?
    /// Jumps of the echo's delay followed without a canceller reset.
    var echoMoves: Int?
    /// Full-chain ERLE over time: window end times (s) and values (dB; nil where the echo is
    /// too weak or the near end talks).
    var erleOverTime: [Double?]?
    var linearERLEOverTime: [Double?]?

    enum CodingKeys: String, CodingKey {
        case erleDB = "erle_db", linearERLEDB = "linear_erle_db", convergenceS = "convergence_s"
        case linearConvergenceS = "linear_convergence_s", postDoubleTalkERLEDB = "post_double_talk_erle_db"
        case pathChangeRecoveryS = "path_change_recovery_s", linearPathChangeRecoveryS = "linear_path_change_recovery_s"
        case addedDelayMs = "added_delay_ms", pesq, stoi, pesqFarSilent = "pesq_far_silent",
             aecmosEchoST = "aecmos_echo_st", aecmosEchoDT = "aecmos_echo_dt", aecmosDegDT = "aecmos_deg_dt",
             aecmosEcho = "aecmos_echo", aecmosDeg = "aecmos_deg", dnsmosSIG = "dnsmos_sig", dnsmosBAK = "dnsmos_bak",
             dnsmosOVRL = "dnsmos_ovrl", estimatedDelayMs = "estimated_delay_ms"
        case estimatedDriftPPM = "estimated_drift_ppm", realtimeFactor = "realtime_factor", cancellerResets = "canceller_resets"
        case echoMoves = "echo_moves"
        case erleOverTime = "erle_over_time_db", linearERLEOverTime = "linear_erle_over_time_db"
    }
}

/// The ground truth of a scenario, as the metrics need it.
struct GroundTruth {
    var sampleRate: Int
    var echo: [Float]
    var near: [Float]
    var noise: [Float]?
    var farSingleTalk: [Range<Int>]
    var doubleTalk: Range<Int>?
    var pathChange: Int?
}

enum Measure {
    /// ERLE windows: 200 ms, every 100 ms.
    static let windowSeconds = 0.2
    static let hopSeconds = 0.1
    /// The level ERLE must reach for convergence and recovery, and for how long.
    static let convergenceDB = 20.0
    static let sustainSeconds = 1.0

    /// `ranges` clipped to start at `from`.
    static func clip(_ ranges: [Range<Int>], from: Int, to: Int = .max) -> [Range<Int>] {
        ranges.compactMap { r in
            let lo = max(r.lowerBound, from), hi = min(r.upperBound, to)
            return lo < hi ? lo..<hi : nil
        }
    }

    /// ERLE per window over far-end single talk; nil where the echo is within 10 dB of the noise
    /// (or below -60 dBFS) or the window overlaps double talk.
    static func erleOverTime(_ truth: GroundTruth, output: [Float]) -> [Double?] {
        let fs = truth.sampleRate
        let window = Int(windowSeconds * Double(fs)), hop = Int(hopSeconds * Double(fs))
        let noisePower = truth.noise.map { Levels.energy($0) / Double(max(1, $0.count)) } ?? 0
        var values: [Double?] = []
        var start = 0
        while start + window <= min(truth.echo.count, output.count) {
            let range = start..<(start + window)
            var value: Double?
            if truth.doubleTalk.map({ !$0.overlaps(range) }) ?? true {
                let echoPower = Levels.energy(truth.echo[range]) / Double(window)
                if echoPower > max(10 * noisePower, 1e-6) {
                    value = Levels.decibels(power: echoPower / max(Levels.energy(output[range]) / Double(window), 1e-20))
                }
            }
            values.append(value)
            start += hop
        }
        return values
    }

    /// End time (s) of window `index`.
    static func windowEnd(_ index: Int) -> Double { Double(index) * hopSeconds + windowSeconds }

    /// Seconds from `from` (s) until the windowed ERLE reaches `convergenceDB` and stays there
    /// (every measurable window) for `sustainSeconds`, looking no further than `until`.
    static func timeToReach(_ series: [Double?], from: Double, until: Double) -> Double? {
        let sustain = Int(sustainSeconds / hopSeconds)
        // Start at the first measurable window ending after `from`: the echo's onset.
        guard let first = series.indices.first(where: { windowEnd($0) - windowSeconds >= from - 1e-9 && series[$0] != nil })
        else { return nil }
        let onset = windowEnd(first) - windowSeconds
        var i = first
        while i < series.count && windowEnd(i) <= until + 1e-9 {
            if let v = series[i], v >= convergenceDB {
                var held = true
                var j = i + 1
                while j < min(series.count, i + 1 + sustain) && windowEnd(j) <= until + 1e-9 {
                    if let w = series[j], w < convergenceDB { held = false; break }
                    j += 1
                }
                if held { return windowEnd(i) - onset }
            }
            i += 1
        }
        return nil
    }

    /// Lag (ms) of `output` behind `mic` over double talk, by cross-correlation with the near end.
    static func addedDelay(_ truth: GroundTruth, output: [Float]) -> Double? {
        guard let dt = truth.doubleTalk, dt.upperBound <= output.count else { return nil }
        let near = Array(truth.near[dt]), out = Array(output[dt])
        let maxLag = truth.sampleRate / 20
        let a = Alignment.find(reference: near, test: out, maxLag: maxLag)
        guard a.correlation > 0.3 else { return nil }
        return Double(a.lag) / Double(truth.sampleRate) * 1000
    }

    /// Everything that needs only the signals.
    static func compute(_ truth: GroundTruth, output: [Float], linear: [Float]?) -> Metrics {
        let fs = truth.sampleRate
        var m = Metrics()
        let steady = clip(truth.farSingleTalk, from: 2 * fs)
        m.erleDB = Levels.erle(echo: truth.echo, residual: output, over: steady)
        let series = erleOverTime(truth, output: output)
        m.erleOverTime = series
        let firstSegmentEnd = Double(truth.doubleTalk?.lowerBound ?? truth.echo.count) / Double(fs)
        m.convergenceS = timeToReach(series, from: 0, until: firstSegmentEnd)
        if let dt = truth.doubleTalk, dt.upperBound < truth.echo.count {
            m.postDoubleTalkERLEDB = Levels.erle(echo: truth.echo, residual: output,
                                                 over: [dt.upperBound..<min(truth.echo.count, dt.upperBound + 2 * fs)])
        }
        if let change = truth.pathChange {
            m.pathChangeRecoveryS = timeToReach(series, from: Double(change) / Double(fs), until: Double(truth.echo.count) / Double(fs))
        }
        m.addedDelayMs = addedDelay(truth, output: output)
        if let linear {
            m.linearERLEDB = Levels.erle(echo: truth.echo, residual: linear, over: steady)
            let linearSeries = erleOverTime(truth, output: linear)
            m.linearERLEOverTime = linearSeries
            m.linearConvergenceS = timeToReach(linearSeries, from: 0, until: firstSegmentEnd)
            if let change = truth.pathChange {
                m.linearPathChangeRecoveryS = timeToReach(linearSeries, from: Double(change) / Double(fs),
                                                          until: Double(truth.echo.count) / Double(fs))
            }
        }
        return m
    }

    /// ERLE of `output` against the microphone over frames where the far end plays, for runs
    /// without ground truth (the near end may talk, so this is a lower bound).
    static func blindERLE(far: [Float], mic: [Float], output: [Float], sampleRate: Int) -> Double? {
        let frame = sampleRate / 100
        var ranges: [Range<Int>] = []
        var start = 2 * sampleRate
        while start + frame <= min(far.count, mic.count, output.count) {
            let range = start..<(start + frame)
            if Levels.energy(far[range]) / Double(frame) > 1e-5 { ranges.append(range) }
            start += frame
        }
        return Levels.erle(echo: mic, residual: output, over: ranges)
    }
}

extension Array where Element == Double {
    /// The median (nil when empty).
    var median: Double? {
        guard !isEmpty else { return nil }
        let s = sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }
}
