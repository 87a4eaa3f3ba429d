/// The errors the audio session reports.
///
/// Each case says what went wrong in words; ``code`` gives Apple's `AVAudioSession.ErrorCode`
/// value for code that compares numbers. Every throwing API of the session throws this type only
/// (typed throws), so `catch` clauses can switch over it exhaustively.
///
/// Thread safety: a value type; safe to use from any thread.
public enum AudioSessionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The category does not accept this option; the session keeps its previous configuration.
    /// Apple: `badParam` (-50).
    case categoryOptionNotAccepted(option: AudioSession.CategoryOptions, category: AudioSession.Category)
    /// An output override needs the ``AudioSession/Category/playAndRecord`` category.
    /// Apple: `badParam` (-50).
    case overrideRequiresPlayAndRecord(category: AudioSession.Category)
    /// A preferred hardware value is out of range (for example a negative sample rate).
    /// Apple: `badParam` (-50).
    case invalidPreferredValue(name: String, value: Double)
    /// The port is not among the session's available inputs (or the port's data sources).
    /// Apple: `badParam` (-50).
    case portNotAvailable(uid: String)
    /// The data source does not belong to the port. Apple: `badParam` (-50).
    case dataSourceNotAvailable(dataSourceID: Int, portUID: String)
    /// The data source does not support the polar pattern. Apple: `badParam` (-50).
    case polarPatternNotSupported(AudioSession.PolarPattern, dataSourceID: Int)
    /// A session with higher priority (the phone) holds audio. Apple: `insufficientPriority` ('!pri').
    case insufficientPriority(heldBy: String)
    /// A non-mixable session in the background may not interrupt others. Apple: `cannotInterruptOthers` ('!int').
    case cannotInterruptOthers
    /// The session was deactivated with I/O still running: the named I/O was stopped first, the
    /// session is now inactive. Apple: `isBusy` ('!act').
    case isBusy(stoppedIO: [String])
    /// The operation needs an active session (starting I/O). Apple: `sessionNotActive` ('inac').
    case sessionNotActive
    /// Media services were lost and not yet reset. Apple: `mediaServicesFailed` ('msrv').
    case mediaServicesFailed
    /// No output port is available for a category that plays. Apple: `cannotStartPlaying` ('!pla').
    case cannotStartPlaying
    /// No input port is available for a category that records. Apple: `cannotStartRecording` ('!rec').
    case cannotStartRecording
    /// The hardware has no input gain control (``AudioSession/isInputGainSettable`` is `false`).
    /// Apple: `badParam` (-50).
    case inputGainNotSettable

    /// Apple's numeric error code (`AVAudioSession.ErrorCode`) for this error.
    ///
    /// Thread safety: safe from any thread.
    public var code: Code {
        switch self {
        case .categoryOptionNotAccepted, .overrideRequiresPlayAndRecord, .invalidPreferredValue,
             .portNotAvailable, .dataSourceNotAvailable, .polarPatternNotSupported, .inputGainNotSettable:
            .badParam
        case .insufficientPriority: .insufficientPriority
        case .cannotInterruptOthers: .cannotInterruptOthers
        case .isBusy: .isBusy
        case .sessionNotActive: .sessionNotActive
        case .mediaServicesFailed: .mediaServicesFailed
        case .cannotStartPlaying: .cannotStartPlaying
        case .cannotStartRecording: .cannotStartRecording
        }
    }

    /// A sentence that names what was wrong.
    ///
    /// Thread safety: safe from any thread.
    public var description: String {
        switch self {
        case let .categoryOptionNotAccepted(option, category):
            let accepting = AudioSession.Category.allCases.filter { $0.acceptedOptions.contains(option) }
            let list = accepting.isEmpty ? "no category" : accepting.map { "'\($0)'" }.joined(separator: ", ")
            return "category option '\(option.singleName)' is not accepted by category '\(category)' "
                + "(accepted by \(list)); the session keeps its previous configuration"
        case let .overrideRequiresPlayAndRecord(category):
            return "output port override is only applicable with category 'playAndRecord', not '\(category)'"
        case let .invalidPreferredValue(name, value):
            return "preferred \(name) \(value) is out of range"
        case let .portNotAvailable(uid):
            return "port '\(uid)' is not available to this session"
        case let .dataSourceNotAvailable(dataSourceID, portUID):
            return "data source \(dataSourceID) does not belong to port '\(portUID)'"
        case let .polarPatternNotSupported(pattern, dataSourceID):
            return "data source \(dataSourceID) does not support polar pattern '\(pattern)'"
        case let .insufficientPriority(heldBy):
            return "session '\(heldBy)' has a higher priority and holds audio"
        case .cannotInterruptOthers:
            return "a non-mixable session in the background cannot interrupt other audio"
        case let .isBusy(stoppedIO):
            return "deactivated with I/O running; stopped: \(stoppedIO.joined(separator: ", "))"
        case .sessionNotActive:
            return "the session is not active"
        case .mediaServicesFailed:
            return "media services were lost"
        case .cannotStartPlaying:
            return "no output is available for the category"
        case .cannotStartRecording:
            return "no input is available for the category"
        case .inputGainNotSettable:
            return "the input gain cannot be set on this hardware"
        }
    }

    /// Apple's `AVAudioSession.ErrorCode` values: an `OSStatus`, often a four-character code.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public struct Code: RawRepresentable, Hashable, Sendable {
        /// The numeric value.
        public let rawValue: Int

        /// Creates a code from its numeric value.
        ///
        /// Thread safety: safe from any thread.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Builds a code from its four-character spelling, as `'!pri'` in C.
        init(fourCharacterCode: String) {
            self.rawValue = fourCharacterCode.utf8.reduce(0) { $0 << 8 | Int($1) }
        }

        /// `-50`: an invalid parameter.
        public static let badParam = Code(rawValue: -50)
        /// `'!pri'`: another session with higher priority holds audio.
        public static let insufficientPriority = Code(fourCharacterCode: "!pri")
        /// `'!int'`: a background activation may not interrupt others.
        public static let cannotInterruptOthers = Code(fourCharacterCode: "!int")
        /// `'!act'`: deactivated while I/O was running.
        public static let isBusy = Code(fourCharacterCode: "!act")
        /// `'inac'`: the session is not active.
        public static let sessionNotActive = Code(fourCharacterCode: "inac")
        /// `'msrv'`: media services failed.
        public static let mediaServicesFailed = Code(fourCharacterCode: "msrv")
        /// `'!pla'`: cannot start playing.
        public static let cannotStartPlaying = Code(fourCharacterCode: "!pla")
        /// `'!rec'`: cannot start recording.
        public static let cannotStartRecording = Code(fourCharacterCode: "!rec")
    }
}
