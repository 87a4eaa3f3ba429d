import DNS
import Foundation
import Platform
import Synchronization
import Testing

/// Answers no real server would send, from a scripted server on loopback: too many records,
/// compression loops, names that are not host names, sections that do not fit, short rdata.
/// Each must end in values or a typed error, never a crash.
@Suite("DNS resolver and hostile answers")
struct HostileAnswerTests {
    @Test func atMost32RecordsAreUsed() throws {
        let server = try ScriptedServer { query in
            Reply(query, answers: (0..<100).map { .srv(priority: UInt16($0), port: 5060, target: .pointer(12)) })
        }
        defer { server.stop() }
        let records = try server.resolver().srv("_sip._udp.example.test")
        #expect(records.count == 32)
        #expect(records.first == DNSServiceRecord(priority: 0, weight: 1, port: 5060, target: "_sip._udp.example.test"))
    }

    @Test func compressionLoopIsDroppedNotFollowed() throws {
        let server = try ScriptedServer { query in
            // The first target points at itself; the second is fine.
            let loop = Reply.answerStart(query) + 12 + 6  // header of the first record, then priority/weight/port
            return Reply(query, answers: [.srv(priority: 1, port: 1, target: .pointer(UInt16(loop))),
                                          .srv(priority: 2, port: 2, target: .labels(["ok", "test"]))])
        }
        defer { server.stop() }
        #expect(try server.resolver().srv("_sip._udp.example.test").map(\.target) == ["ok.test"])
    }

    @Test func onlyUnusableRecordsIsMalformed() throws {
        let server = try ScriptedServer { query in
            let loop = Reply.answerStart(query) + 12 + 6
            return Reply(query, answers: [.srv(priority: 1, port: 1, target: .pointer(UInt16(loop))),
                                          .srv(priority: 1, port: 1, target: .labels(["bad name", "test"])),
                                          .srv(priority: 1, port: 1, target: .labels(["nul\u{0}", "test"])),
                                          .raw(type: 33, rdata: [0, 1, 0, 2])])  // too short for an SRV
        }
        defer { server.stop() }
        #expect(throws: DNSError.malformedAnswer) { try server.resolver().srv("_sip._udp.example.test") }
    }

    @Test func countsBeyondTheMessageAreMalformed() throws {
        let server = try ScriptedServer { query in
            var reply = Reply(query, answers: [.raw(type: 1, rdata: [127, 0, 0, 1])])
            reply.bytes[7] = 5  // five answers claimed, one present
            return reply
        }
        defer { server.stop() }
        #expect(throws: DNSError.malformedAnswer) { try server.resolver().addresses(of: "sip.example.test") }
    }

    @Test func addressesOfTheWrongLengthAreLeftOut() throws {
        let server = try ScriptedServer { query in
            let type = Reply.questionType(query)
            return Reply(query, answers: type == 1 ? [.raw(type: 1, rdata: [10, 0, 0]), .raw(type: 1, rdata: [10, 0, 0, 2])]
                                                   : [.raw(type: 28, rdata: Array(repeating: 0, count: 15))])
        }
        defer { server.stop() }
        #expect(try server.resolver().addresses(of: "sip.example.test") == ["10.0.0.2"])
    }

    @Test func namingRecordsThatDoNotFitAreLeftOut() throws {
        let server = try ScriptedServer { query in
            let good = Reply.naptr(order: 1, flags: "s", service: "SIP+D2U", replacement: [4, 95, 115, 105, 112, 0])  // "_sip."
            return Reply(query, answers: [
                .raw(type: 35, rdata: [0, 1, 0, 1, 200, 115]),  // a flags string longer than the rdata
                .raw(type: 35, rdata: Reply.naptr(order: 2, flags: "s", service: "SIP\u{7}D2U", replacement: [0])),
                .raw(type: 35, rdata: Reply.naptr(order: 3, flags: "s!", service: "SIP+D2U", replacement: [0])),
                .raw(type: 35, rdata: [0, 4, 0, 1, 1, 115, 0, 0, 0xFF, 0xFF]),  // a replacement pointing past the message
                .raw(type: 35, rdata: Reply.naptr(order: 5, flags: "s", service: "SIP+D2U", replacement: [])),  // no name
                .raw(type: 35, rdata: good),
            ])
        }
        defer { server.stop() }
        #expect(try server.resolver().naptr("example.test") == [
            DNSNamingRecord(order: 1, preference: 1, flags: "s", service: "SIP+D2U", replacement: "_sip")])
    }

    static let hasIPv6Loopback = (try? UDPSocket(bindingTo: SocketAddress(host: "::1", port: 0))) != nil

    /// An IPv6 name server (glibc keeps those outside `nsaddr_list`); not where ::1 cannot be bound.
    @Test(.enabled(if: hasIPv6Loopback)) func ipv6NameServer() throws {
        let server = try ScriptedServer(host: "::1") { query in
            Reply(query, answers: Reply.questionType(query) == 1 ? [.raw(type: 1, rdata: [192, 0, 2, 1])] : [])
        }
        defer { server.stop() }
        #expect(try server.resolver().addresses(of: "sip.example.test") == ["192.0.2.1"])
    }
}

/// A DNS reply built from a query: the query's id and question, then answer records.
struct Reply {
    enum Name { case pointer(UInt16), labels([String]) }
    enum Answer {
        case srv(priority: UInt16, port: UInt16, target: Name)
        case raw(type: UInt16, rdata: [UInt8])
    }

    var bytes: [UInt8]

    /// Where the answer section starts: after the header and the query's question.
    static func answerStart(_ query: [UInt8]) -> Int {
        var i = 12
        while i < query.count, query[i] != 0 { i += Int(query[i]) + 1 }
        return i + 1 + 4
    }

    static func questionType(_ query: [UInt8]) -> UInt16 {
        let at = answerStart(query) - 4
        return UInt16(query[at]) << 8 | UInt16(query[at + 1])
    }

    init(_ query: [UInt8], answers: [Answer]) {
        let end = Self.answerStart(query)
        let u16 = Self.u16, encode = Self.encode
        bytes = Array(query[0..<2]) + [0x81, 0x80, 0, 1] + u16(UInt16(answers.count)) + [0, 0, 0, 0]
        bytes += query[12..<end]
        for answer in answers {
            bytes += [0xC0, 12]  // owner: the question's name
            switch answer {
            case .srv(let priority, let port, let target):
                let name = encode(target)
                bytes += u16(33) + [0, 1, 0, 0, 0, 60] + u16(UInt16(6 + name.count)) + u16(priority) + u16(1) + u16(port) + name
            case .raw(let type, let rdata):
                bytes += u16(type) + [0, 1, 0, 0, 0, 60] + u16(UInt16(rdata.count)) + rdata
            }
        }
    }

    /// NAPTR rdata: order, preference 1, flags, service, an empty regexp, then `replacement` as wire bytes.
    static func naptr(order: UInt16, flags: String, service: String, replacement: [UInt8]) -> [UInt8] {
        u16(order) + u16(1) + [UInt8(flags.utf8.count)] + Array(flags.utf8) + [UInt8(service.utf8.count)]
            + Array(service.utf8) + [0] + replacement
    }

    private static func u16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }

    private static func encode(_ name: Name) -> [UInt8] {
        switch name {
        case .pointer(let offset): return [0xC0 | UInt8(offset >> 8), UInt8(offset & 0xFF)]
        case .labels(let labels): return labels.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) } + [0]
        }
    }
}

/// A UDP server on loopback that answers each query with what `answer` builds, on its own thread.
final class ScriptedServer: Sendable {
    let socket: UDPSocket
    private final class Flags: Sendable {
        let stopped = Atomic<Bool>(false)
        let done = Atomic<Bool>(false)
    }
    private let flags = Flags()

    init(host: String = "127.0.0.1", answer: @escaping @Sendable ([UInt8]) -> Reply) throws {
        socket = try UDPSocket(bindingTo: SocketAddress(host: host, port: 0))
        let thread = Thread { [socket, flags] in
            var buffer = [UInt8](repeating: 0, count: 2048)
            while !flags.stopped.load(ordering: .relaxed) {
                let result = buffer.withUnsafeMutableBytes { socket.receive(into: $0, timeoutMs: 50) }
                guard case .datagram(let length, let source, _) = result, length > 12 else { continue }
                _ = socket.send(answer(Array(buffer[0..<length])).bytes, to: source)
            }
            flags.done.store(true, ordering: .releasing)
        }
        thread.start()
    }

    /// A resolver that asks this server only, once, waiting a second.
    func resolver() throws -> DNSResolver {
        try DNSResolver(.servers([socket.localAddress], timeoutSeconds: 1, attempts: 1))
    }

    func stop() {
        flags.stopped.store(true, ordering: .relaxed)
        while !flags.done.load(ordering: .acquiring) { usleep(10_000) }
    }
}
