import Foundation
@testable import Platform
import Synchronization
import Testing

@Suite("Platform: addresses, UDP sockets, threads, clocks")
struct PlatformTests {
    @Test("Addresses parse for IPv4 and IPv6")
    func addresses() throws {
        let v4 = try SocketAddress(parsing: "127.0.0.1:5004")
        #expect(v4.family == .ipv4 && v4.port == 5004 && v4.host == "127.0.0.1" && v4.description == "127.0.0.1:5004")
        let v6 = try SocketAddress(parsing: "[::1]:6000")
        #expect(v6.family == .ipv6 && v6.port == 6000 && v6.host == "::1" && v6.description == "[::1]:6000")
        #expect(try SocketAddress(parsing: "localhost:1").port == 1)
        for bad in ["127.0.0.1", "::1:5", "[::1]5", "host:99999", ":5", "no.such.host.invalid:5"] {
            #expect(throws: SocketError.self) { try SocketAddress(parsing: bad) }
        }
        #expect(v4.with(port: 1) != v4 && v4.with(port: 1).sameHost(as: v4))
        #expect(Set([v4, v4.with(port: 5004), v6]).count == 2)
    }

    @Test("A lookup in one family, and the local end of the route to a peer")
    func familyAndRoute() throws {
        #expect(try SocketAddress(host: "localhost", port: 1, family: .ipv4).host == "127.0.0.1")
        #expect(try SocketAddress(host: "127.0.0.1", port: 1, family: .ipv4).family == .ipv4)
        #expect(throws: SocketError.self) { try SocketAddress(host: "::1", port: 1, family: .ipv4) }
        #expect(throws: SocketError.self) { try SocketAddress(host: "127.0.0.1", port: 1, family: .ipv6) }
        #expect(UDPSocket.localAddress(toward: try SocketAddress(host: "127.0.0.1", port: 9))?.host == "127.0.0.1")
        #expect(UDPSocket.localAddress(toward: try SocketAddress(host: "::1", port: 9))?.host == "::1")
    }

    @Test("Datagrams go both ways on IPv4 and IPv6 loopback", arguments: ["127.0.0.1", "::1"])
    func datagrams(host: String) throws {
        let a = try UDPSocket(bindingTo: SocketAddress(host: host, port: 0))
        let b = try UDPSocket(bindingTo: SocketAddress(host: host, port: 0))
        #expect(a.localAddress.port != 0)
        #expect(a.send([1, 2, 3], to: b.localAddress) == .sent)
        var buffer = [UInt8](repeating: 0, count: 2)
        let result = buffer.withUnsafeMutableBytes { b.receive(into: $0, timeoutMs: 1000) }
        // Two bytes of room for three: the datagram is reported truncated.
        #expect(result == .datagram(length: 2, source: a.localAddress, truncated: true))
        #expect(buffer == [1, 2])
        #expect(buffer.withUnsafeMutableBytes { b.receive(into: $0, timeoutMs: 10) } == .timeout)
    }

    @Test("A loop thread carries its name, as top -H and perf show it")
    func loopThreadName() {
        // The loop reads its own thread's name, so threads of other tests cannot answer for it.
        let loop = NameReadingLoop()
        let thread = LoopThread(name: "callaudio-rtp", loop)
        thread.start()
        thread.stop()
        #expect(loop.name.withLock { $0 } == "callaudio-rtp")
    }

    @Test("A platform thread is named, runs its body once and is joined")
    func platformThread() throws {
        let ran = Mutex<(count: Int, name: String?)>((0, nil))
        let thread = try PlatformThread(name: "callaudio-test", priority: nil) {
            let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
            ran.withLock { $0 = ($0.count + 1, comm?.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        let granted = thread.priorityGranted
        thread.join()
        #expect(!granted)  // none asked for
        #expect(ran.withLock { $0.count } == 1)
        #expect(ran.withLock { $0.name } == "callaudio-test")
    }

    @Test("A loop thread stops when asked, and once stopped does not run again")
    func loopThreadStops() {
        let loop = CountingLoop()
        let thread = LoopThread(name: "callaudio-loop", loop)
        thread.start()
        thread.start()  // already running: nothing
        while loop.turns.load(ordering: .relaxed) == 0 { usleep(1000) }
        thread.stop()
        let turns = loop.turns.load(ordering: .relaxed)
        usleep(20_000)
        #expect(loop.turns.load(ordering: .relaxed) == turns)
        #expect(loop.runs.load(ordering: .relaxed) == 1)
        thread.stop()  // not running: nothing
    }

    @Test("The monotonic clock never goes back and moves with sleep")
    func monotonicClock() {
        let a = MonotonicClock.nanoseconds()
        usleep(5_000)
        let b = MonotonicClock.nanoseconds()
        #expect(b >= a + 5_000_000)
        #expect(WallClock.nanoseconds() > 1_600_000_000 * 1_000_000_000)
    }

    @Test("Equal seeds give equal sequences; the generator's moments are right")
    func seededRandom() {
        var a = SeededRandom(seed: 7), b = SeededRandom(seed: 7), c = SeededRandom(seed: 8)
        let x = (0..<100).map { _ in a.next() }
        #expect(x == (0..<100).map { _ in b.next() })
        #expect(x != (0..<100).map { _ in c.next() })
        var g = SeededRandom(seed: 1)
        let n = 20_000
        let samples = (0..<n).map { _ in g.gaussian() }
        let mean = samples.reduce(0, +) / Double(n)
        let variance = samples.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(n)
        #expect(abs(mean) < 0.05 && abs(variance - 1) < 0.05)
        #expect((0..<1000).allSatisfy { _ in (0..<1).contains(g.unit()) })
    }
}

/// Counts its runs and the turns of its loop until asked to stop.
private final class CountingLoop: ThreadLoop {
    let runs = Atomic<Int>(0)
    let turns = Atomic<Int>(0)
    func run(stopping: borrowing Atomic<Bool>) {
        runs.add(1, ordering: .relaxed)
        while !stopping.load(ordering: .acquiring) {
            turns.add(1, ordering: .relaxed)
            usleep(1000)
        }
    }
}

/// Records the name of the thread it runs on.
private final class NameReadingLoop: ThreadLoop {
    let name = Mutex<String?>(nil)
    func run(stopping: borrowing Atomic<Bool>) {
        let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
        name.withLock { $0 = comm?.trimmingCharacters(in: .whitespacesAndNewlines) }
    }
}
