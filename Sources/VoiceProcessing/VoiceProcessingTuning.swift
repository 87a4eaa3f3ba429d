/// Every number that decides what the voice-processing chain does, in one value, as WebRTC's
/// `EchoCanceller3Config` is for AEC3: a part per stage, each constant with what it does and its
/// unit. The defaults are the shipped chain: a unit built with `VoiceProcessingTuning()` gives
/// the same output, bit for bit, as before the constants were moved here.
///
/// It is `Codable` so that experiments change files, not code (`aecbench tuning --print`, then
/// `aecbench process|suite --tuning FILE.json`). Decoding is partial: a key that is missing takes
/// its default, at any depth, so a file may hold only what it changes; a key that is not a
/// tuning constant is an error (a misspelt name would otherwise change nothing, silently).
/// ``VoiceProcessingUnit`` checks every value's range when it is built
/// (``VoiceProcessingConfiguration/tuning``) and throws ``VoiceProcessingError`` naming the first
/// one out of range.
///
/// What stays in code: what the algorithms fix rather than choose (transform sizes, the delay
/// estimator's 4 kHz decimation and its filter, the sinc kernel, SpeexDSP's own DC notch, the
/// split the distortion suppressor's bands come from, random seeds); each says so where it is.
///
/// Thread safety: a value type; safe from any thread.
public struct VoiceProcessingTuning: Sendable, Equatable, Codable {
    /// Where the reference is read from the loudspeaker history (``Alignment``).
    public var alignment = Alignment()
    /// The echo's delay by cross-correlation (``DelayEstimator``).
    public var delayEstimator = DelayEstimator()
    /// The echo's jumps, followed without a canceller reset (``EchoShift``).
    public var echoShift = EchoShift()
    /// The clock drift, from the delay over time (``Drift``).
    public var drift = Drift()
    /// Whether there is an echo path at all (``EchoPath``).
    public var echoPath = EchoPath()
    /// The linear canceller's ERLE, divergence and collapse (``CancellerHealth``).
    public var cancellerHealth = CancellerHealth()
    /// The echo gate: the startup hold and the residual it lowers once converged (``Gate``).
    public var gate = Gate()
    /// The gate's band-by-band near-end test (``NearEndBands``).
    public var nearEndBands = NearEndBands()
    /// The coherence of the far end with the capture and with the canceller's output (``Coherence``).
    public var coherence = Coherence()
    /// The suppression of a loudspeaker's distortion below 3 kHz (``DistortionSuppressor``).
    public var distortionSuppressor = DistortionSuppressor()
    /// The noise suppression's depth from the capture's noise floor (``NoiseDepth``).
    public var noiseDepth = NoiseDepth()
    /// The noise filled back where residual echo suppression took it (``ComfortNoise``).
    public var comfortNoise = ComfortNoise()
    /// SpeexDSP's preprocessor (``PostFilter``).
    public var postFilter = PostFilter()
    /// Far-end activity, speech while muted and ducking (``Activity``).
    public var activity = Activity()

    /// The shipped tuning.
    public init() {}

    /// The parts `decoder` holds; a missing part or key keeps its shipped value, an unknown one throws.
    public init(from decoder: any Decoder) throws {
        self.init()
        let c = try decoder.tuningContainer(CodingKeys.self)
        try c.update(&alignment, .alignment)
        try c.update(&delayEstimator, .delayEstimator)
        try c.update(&echoShift, .echoShift)
        try c.update(&drift, .drift)
        try c.update(&echoPath, .echoPath)
        try c.update(&cancellerHealth, .cancellerHealth)
        try c.update(&gate, .gate)
        try c.update(&nearEndBands, .nearEndBands)
        try c.update(&coherence, .coherence)
        try c.update(&distortionSuppressor, .distortionSuppressor)
        try c.update(&noiseDepth, .noiseDepth)
        try c.update(&comfortNoise, .comfortNoise)
        try c.update(&postFilter, .postFilter)
        try c.update(&activity, .activity)
    }

    /// Throws for the first value out of its range, naming it; ``VoiceProcessingUnit`` calls it
    /// when it is built, and is then not made.
    public func validate() throws(VoiceProcessingError) {
        try alignment.validate()
        try delayEstimator.validate()
        try echoShift.validate()
        try drift.validate()
        try echoPath.validate()
        try cancellerHealth.validate()
        try gate.validate()
        try nearEndBands.validate()
        try coherence.validate()
        try distortionSuppressor.validate()
        try noiseDepth.validate()
        try comfortNoise.validate()
        try postFilter.validate()
        try activity.validate()
    }

    /// Band edges of about a Bark each from 100 Hz to 8 kHz, the resolution at which two talkers'
    /// spectra differ: the default for the near-end band test and the comfort noise.
    static let barkEdgesHz: [Double] = [100, 200, 300, 400, 510, 630, 770, 920, 1080, 1270, 1480, 1720,
                                        2000, 2320, 2700, 3150, 3700, 4400, 5300, 6400, 8000]
}

// MARK: Range checks

/// Throws unless `value` lies in `range`; `name` is the value's path in the tuning (`gate.releaseERLEDB`).
func checkTuning<T: Comparable>(_ value: T, in range: ClosedRange<T>, _ name: StaticString) throws(VoiceProcessingError) {
    // A NaN is in no range.
    guard range.contains(value) else { throw VoiceProcessingError("tuning \(name) = \(value) must be in \(range)") }
}

/// Throws unless `edges` rise strictly, from at least two, within `range`.
func checkTuning(edges: [Double], in range: ClosedRange<Double>, _ name: StaticString) throws(VoiceProcessingError) {
    guard edges.count >= 2, zip(edges, edges.dropFirst()).allSatisfy({ $0 < $1 }), edges.allSatisfy(range.contains) else {
        throw VoiceProcessingError("tuning \(name) must be at least two edges rising strictly within \(range) Hz")
    }
}

// MARK: Partial decoding

/// Any key, to list what a tuning file holds.
private struct AnyTuningKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension Decoder {
    /// The keyed container of one part of a tuning, after checking that every key in it is one
    /// of `Key`'s.
    func tuningContainer<Key: CodingKey>(_ keys: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let all = try container(keyedBy: AnyTuningKey.self)
        for key in all.allKeys where Key(stringValue: key.stringValue) == nil {
            throw DecodingError.dataCorruptedError(forKey: key, in: all,
                                                   debugDescription: "\(key.stringValue) is not a tuning constant here")
        }
        return try container(keyedBy: Key.self)
    }
}

extension KeyedDecodingContainer {
    /// Replaces `value` with the one under `key`, if there is one: missing keys keep their defaults.
    func update<T: Decodable>(_ value: inout T, _ key: Key) throws {
        if let decoded = try decodeIfPresent(T.self, forKey: key) { value = decoded }
    }
}
