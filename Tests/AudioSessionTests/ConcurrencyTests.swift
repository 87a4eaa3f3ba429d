import AudioSession
import Testing

/// The thread-safety model: one lock, no call-outs under it. Many threads at once must neither
/// deadlock nor corrupt state.
@Suite("Concurrency")
struct ConcurrencyTests {
    @Test("Concurrent activations, plug events and observers that call back settle in a consistent state")
    func concurrentUse() async throws {
        let (system, hardware) = makeSystem()
        let sessions = (0..<4).map { system.makeSession(name: "s\($0)") }
        for session in sessions {
            try session.setCategory(.playAndRecord, options: [.allowBluetooth])
            // Observers read back into the system while others change it.
            _ = session.addObserver { [weak session] _ in _ = session?.currentRoute }
        }

        await withTaskGroup(of: Void.self) { group in
            for (index, session) in sessions.enumerated() {
                group.addTask {
                    for round in 0..<200 {
                        try? session.setActive(round % 2 == 0)
                        if round % 7 == 0 { try? session.overrideOutputAudioPort(.speaker) }
                        _ = session.isDucked
                        _ = index
                    }
                    try? session.setActive(false)
                }
            }
            group.addTask {
                for round in 0..<200 {
                    if round % 2 == 0 { hardware.connect(.bluetoothHeadset()) } else { hardware.disconnect(.bluetoothHeadset()) }
                }
            }
        }

        #expect(sessions.allSatisfy { !$0.isActive })
        // With nobody active the last thing the hardware was told is the empty route.
        #expect(hardware.lastAppliedRoute == .empty)
    }
}
