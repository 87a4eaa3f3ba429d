import Foundation

/// The loopback Janus of the `...WithJanus` suites: `eval "$(Tools/janus/run start)"` starts it
/// and exports its URL as `CALLAUDIO_JANUS` (Tools/test does so before those suites).
public enum JanusServer {
    /// Janus's HTTP API, from `CALLAUDIO_JANUS`.
    public static var url: String? { ProcessInfo.processInfo.environment["CALLAUDIO_JANUS"] }
    /// Why a suite that needs Janus cannot run.
    public static let missing = "CALLAUDIO_JANUS is not set: start Janus with eval \"$(Tools/janus/run start)\" (Tools/test does)"
    /// A room number no other test uses.
    public static func newRoom() -> UInt64 { UInt64.random(in: 100_000...999_999_999) }
    /// The shipped configuration's room that refuses plain-RTP participants.
    public static let webRTCOnlyRoom: UInt64 = 1235
}
