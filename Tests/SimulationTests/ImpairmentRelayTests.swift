import Foundation
import Platform
import Simulation
import Testing

@Suite("Network impairment relay")
struct ImpairmentRelayTests {
    @Test("The relay drops exactly what its seeded model drops, and delays the rest")
    func relay() throws {
        let receiver = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))
        let client = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))
        let profile = ImpairmentProfile(delayMs: 30, jitterMs: 5, lossPercent: 20, duplicatePercent: 5)
        let relay = try ImpairmentRelay(listen: SocketAddress(host: "127.0.0.1", port: 0), targets: [receiver.localAddress],
                                        forward: profile, seed: 9)
        relay.start()
        defer { relay.stop() }
        var model = ImpairmentModel(profile: profile, seed: 9)
        var expected = 0
        for _ in 0..<200 {
            let d = model.next()
            expected += (d.delayMs == nil ? 0 : 1) + (d.duplicateDelayMs == nil ? 0 : 1)
        }
        let start = Date()
        for i in 0..<200 { client.send([UInt8(i)], to: relay.listenAddress) }
        var received = 0
        var first: Date?
        var relaySide: SocketAddress?
        var buffer = [UInt8](repeating: 0, count: 16)
        while case let .datagram(_, source, _) = buffer.withUnsafeMutableBytes({ receiver.receive(into: $0, timeoutMs: 300) }) {
            if first == nil { first = Date() }
            relaySide = source
            received += 1
        }
        #expect(received == expected)
        #expect(first!.timeIntervalSince(start) >= 0.024)
        let stats = relay.statistics
        #expect(stats.forwarded == expected && stats.dropped + stats.forwarded - stats.duplicated == 200)
        // Replies to the relay's outgoing socket come back to the client.
        receiver.send([42], to: relaySide!)
        #expect(buffer.withUnsafeMutableBytes { client.receive(into: $0, timeoutMs: 500) } != .timeout)
    }
}
