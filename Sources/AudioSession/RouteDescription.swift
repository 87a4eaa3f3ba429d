/// The ports a session's audio uses: inputs and outputs. Mirrors `AVAudioSessionRouteDescription`.
///
/// An empty route (no inputs, no outputs) is what ``AudioHardware/apply(route:)`` receives when
/// no session is active: the hardware may release its devices.
///
/// Thread safety: a value type; safe to use from any thread.
public struct AudioSessionRouteDescription: Hashable, Sendable, CustomStringConvertible {
    /// The input ports, in use order.
    public var inputs: [AudioSessionPortDescription]
    /// The output ports, in use order (several only with ``AudioSession/Category/multiRoute``).
    public var outputs: [AudioSessionPortDescription]

    /// Creates a route description.
    ///
    /// Thread safety: safe from any thread.
    public init(inputs: [AudioSessionPortDescription] = [], outputs: [AudioSessionPortDescription] = []) {
        self.inputs = inputs
        self.outputs = outputs
    }

    /// A route with no ports.
    ///
    /// Thread safety: safe from any thread.
    public static let empty = AudioSessionRouteDescription()

    /// Whether the route has neither inputs nor outputs.
    ///
    /// Thread safety: safe from any thread.
    public var isEmpty: Bool { inputs.isEmpty && outputs.isEmpty }

    /// The input port types, in order (handy in tests and logs).
    ///
    /// Thread safety: safe from any thread.
    public var inputTypes: [AudioSession.Port] { inputs.map(\.portType) }

    /// The output port types, in order.
    ///
    /// Thread safety: safe from any thread.
    public var outputTypes: [AudioSession.Port] { outputs.map(\.portType) }

    /// `in: [builtInMic] out: [builtInReceiver]`.
    ///
    /// Thread safety: safe from any thread.
    public var description: String {
        "in: \(inputTypes.map(\.rawValue)) out: \(outputTypes.map(\.rawValue))"
    }
}
