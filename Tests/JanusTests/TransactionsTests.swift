import Foundation
import Testing
@testable import Janus

/// Replies that come on the long poll, before or after their request waits for them.
@Suite("Janus transactions")
struct TransactionsTests {
    static func reply(_ transaction: String) -> JanusMessage {
        try! JSONDecoder().decode(JanusMessage.self, from: Data(#"{"janus":"event","transaction":"\#(transaction)"}"#.utf8))
    }

    @Test("A reply that arrives before its request waits is kept for it")
    func early() async throws {
        let transactions = Transactions()
        transactions.expect("a")
        #expect(transactions.deliver(Self.reply("a")))
        #expect(try await transactions.wait(for: "a", timeout: .seconds(1)).transaction == "a")
    }

    @Test("A request waiting gets its reply; a reply nobody expects is not taken")
    func waiting() async throws {
        let transactions = Transactions()
        transactions.expect("b")
        let waiter = Task { try await transactions.wait(for: "b", timeout: .seconds(5)) }
        try await Task.sleep(for: .milliseconds(50))
        #expect(!transactions.deliver(Self.reply("unknown")))
        #expect(transactions.deliver(Self.reply("b")))
        #expect(try await waiter.value.transaction == "b")
    }

    @Test("No reply in time: unreachable; closed: every waiter and any later request fail with closed")
    func timeoutAndClose() async throws {
        let transactions = Transactions()
        transactions.expect("c")
        await #expect(throws: JanusError.self) { try await transactions.wait(for: "c", timeout: .milliseconds(50)) }
        transactions.expect("d")
        let waiter = Task { try await transactions.wait(for: "d", timeout: .seconds(5)) }
        try await Task.sleep(for: .milliseconds(50))
        transactions.close()
        await #expect(throws: JanusError.closed) { try await waiter.value }
        transactions.expect("e")
        await #expect(throws: JanusError.closed) { try await transactions.wait(for: "e", timeout: .seconds(5)) }
    }

    @Test("A server that nothing answers at: unreachable, without waiting for a long poll's timeout")
    func unreachable() async {
        let started = ContinuousClock.now
        do {
            _ = try await AudioBridgeClient.connect(to: "http://127.0.0.1:1/janus")
            Issue.record("connected to nothing")
        } catch {
            guard case .unreachable = error else { Issue.record("\(error)"); return }
        }
        // Refused at once; the bound is loose for a loaded machine (the parallel suites took 6 s once).
        #expect(started.duration(to: .now) < .seconds(20))
    }
}
