extension AudioSession {
    /// What the proximity sensor reports.
    ///
    /// Drives the proximity override (``AudioSession/isProximityRoutingEnabled``): near the ear
    /// the call uses the receiver, away from it the speaker.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public enum Proximity: String, Hashable, Sendable {
        /// No sensor, or no reading yet: proximity changes nothing.
        case unknown
        /// Something (an ear) is close to the sensor.
        case near
        /// Nothing is close to the sensor.
        case far
    }

    /// An explicit output choice for ``AudioSession/overrideOutputAudioPort(_:)``.
    /// Mirrors `AVAudioSession.PortOverride`.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public enum PortOverride: String, Hashable, Sendable {
        /// No override: the route policy decides.
        case none
        /// The built-in speaker (and built-in microphone), whatever else is connected.
        case speaker
    }
}
