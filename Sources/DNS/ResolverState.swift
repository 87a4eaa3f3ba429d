import CResolv
import Glibc
import Platform

/// The one owner of a glibc resolver state (`struct __res_state` on the heap): made by
/// `res_ninit`, freed by `res_nclose` once, in `deinit`.
///
/// Thread safety: not thread-safe; ``DNSResolver`` keeps it behind a mutex.
struct ResolverState: ~Copyable {
    private let state: UnsafeMutablePointer<__res_state>
    /// Room for an answer: glibc's EDNS0 asks for at most 1,200 bytes over UDP, and a truncated
    /// answer is kept rather than retried over TCP (see the shim), so 4 KiB is ample.
    private var answer = [UInt8](repeating: 0, count: 4096)
    /// Most answer records looked at (CNAMEs before the addresses count): bounded work per answer.
    static let maximumExamined = 64

    init(_ configuration: DNSResolver.Configuration) throws(DNSError) {
        guard let state = callaudio_res_new() else {
            throw DNSError.system.asked("res_ninit")
        }
        if case .custom(let servers) = configuration.servers {
            callaudio_res_clear_servers(state)
            for server in servers where callaudio_res_add_server(state, server.host, server.port) != 0 {
                callaudio_res_free(state)
                throw DNSError.invalidConfiguration.asked("name server \(server)")
            }
        }
        callaudio_res_set_timing(state, Int32(configuration.timeoutSeconds), Int32(configuration.attempts))
        self.state = state
    }

    deinit { callaudio_res_free(state) }

    /// One query for `name` of `type`; `parse` turns each answer record of that type into a
    /// value (nil: unusable, left out).
    mutating func query<T>(_ name: String, type: Int32,
                           parse: (Record) -> T?) throws(DNSError) -> [T] {
        let what = "\(RecordType.name(type)) \(name)"
        let state = self.state
        // A server's reply header lands here even when res_nquery fails; zeroed, so an old one is never read.
        for i in 0..<12 { answer[i] = 0 }
        let result: Result<[T], DNSError> = answer.withUnsafeMutableBufferPointer { buffer in
            let length = callaudio_res_query(state, name, type, buffer.baseAddress, Int32(buffer.count))
            guard length >= 0 else { return .failure(Self.failure(state: state, header: buffer).asked(what)) }
            return Self.parse(UnsafeBufferPointer(rebasing: buffer[..<min(Int(length), buffer.count)]),
                              type: type, what: what, parse: parse)
        }
        return try result.get()
    }

    /// Why res_nquery failed: glibc's h_errno, refined by the reply's RCODE when one came
    /// (glibc reports SERVFAIL, REFUSED and no answer alike as TRY_AGAIN).
    private static func failure(state: UnsafeMutablePointer<__res_state>, header: UnsafeMutableBufferPointer<UInt8>) -> DNSError {
        let status = Int(callaudio_res_h_errno(state))
        let isReply = header[2] & 0x80 != 0
        let rcode: Int? = isReply ? Int(header[3] & 0x0F) : nil
        func error(_ base: DNSError, _ text: String) -> DNSError {
            DNSError(code: base.code, responseCode: rcode, status: status, message: text)
        }
        switch (Int32(status), rcode) {
        case (HOST_NOT_FOUND, _), (_, 3): return error(.noSuchName, "no such name (NXDOMAIN)")
        case (NO_DATA, _): return error(.noData, "no record of that type")
        case (_, 5): return error(.refused, "refused (REFUSED)")
        case (_, 2): return error(.serverFailure, "server failure (SERVFAIL)")
        case (_, .some(let code)) where code != 0: return error(.serverFailure, "server failure (RCODE \(code))")
        case (TRY_AGAIN, _): return error(.timeout, "no answer in time")
        case (NO_RECOVERY, _): return error(.serverFailure, "server failure (no recovery)")
        default: return error(.system, "resolver failure (h_errno \(status))")
        }
    }

    /// One answer record, its rdata inside the message.
    struct Record {
        let message: UnsafePointer<UInt8>
        let end: UnsafePointer<UInt8>
        let rdata: UnsafeBufferPointer<UInt8>
        let type: Int32
    }

    private static func parse<T>(_ message: UnsafeBufferPointer<UInt8>, type: Int32, what: String,
                                 parse: (Record) -> T?) -> Result<[T], DNSError> {
        guard let base = message.baseAddress, message.count >= 12 else {
            return .failure(DNSError.malformedAnswer.asked("\(what): \(message.count) bytes"))
        }
        var handle = ns_msg()
        guard callaudio_ns_initparse(base, Int32(message.count), &handle) == 0 else {
            return .failure(DNSError.malformedAnswer.asked("\(what): sections do not fit the message"))
        }
        let count = min(Int(callaudio_ns_msg_answer_count(&handle)), maximumExamined)
        var values: [T] = []
        var ofType = 0
        for index in 0..<count where values.count < HostName.maximumRecords {
            var rrType: Int32 = 0, rrClass: Int32 = 0, length: Int32 = 0
            var rdata: UnsafePointer<UInt8>?
            guard callaudio_ns_answer(&handle, Int32(index), &rrType, &rrClass, &rdata, &length) == 0, let rdata else {
                if values.isEmpty { return .failure(DNSError.malformedAnswer.asked("\(what): record \(index) does not parse")) }
                break
            }
            guard rrType == type, rrClass == 1 else { continue }  // CNAMEs on the way; class IN only
            ofType += 1
            let record = Record(message: base, end: base + message.count,
                                rdata: UnsafeBufferPointer(start: rdata, count: Int(length)), type: type)
            if let value = parse(record) { values.append(value) }
        }
        if values.isEmpty {
            return .failure(ofType == 0 ? DNSError.noData.asked(what)
                                        : DNSError.malformedAnswer.asked("\(what): none of \(ofType) records usable"))
        }
        return .success(values)
    }

    /// An SRV record's rdata: priority, weight, port, then the target (which may be compressed:
    /// dn_expand follows pointers and refuses loops; the name must end inside the rdata).
    static func serviceRecord(_ record: Record) -> DNSServiceRecord? {
        let rdata = record.rdata
        guard rdata.count >= 7, let target = hostName(in: record, at: 6) else { return nil }
        return DNSServiceRecord(priority: u16(rdata, 0), weight: u16(rdata, 2), port: u16(rdata, 4), target: target)
    }

    /// The name at `offset` in `record`'s rdata, without its trailing dot: `"."` or a host name
    /// that ends inside the rdata (dn_expand follows compression pointers and refuses loops);
    /// nil otherwise.
    private static func hostName(in record: Record, at offset: Int) -> String? {
        guard offset < record.rdata.count, let start = record.rdata.baseAddress else { return nil }
        var name = [CChar](repeating: 0, count: 1025)
        let used = name.withUnsafeMutableBufferPointer {
            callaudio_dn_expand(record.message, record.end, start + offset, $0.baseAddress, Int32($0.count))
        }
        guard used > 0, Int(used) <= record.rdata.count - offset else { return nil }
        let text = HostName.trimmed(String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        return text == "." || HostName.isValid(text) ? text : nil
    }

    /// A NAPTR record's rdata (RFC 3403 section 4.1): order, preference, three character
    /// strings (flags, service, regexp), then the replacement, a name that must end inside the
    /// rdata. Every length is checked against the rdata before it is read.
    static func namingRecord(_ record: Record) -> DNSNamingRecord? {
        let rdata = record.rdata
        guard rdata.count >= 8 else { return nil }
        var at = 4
        func characterString(_ allowed: (UInt8) -> Bool) -> String? {
            guard at < rdata.count else { return nil }
            let length = Int(rdata[at])
            guard at + 1 + length <= rdata.count else { return nil }
            let bytes = rdata[(at + 1)..<(at + 1 + length)]
            at += 1 + length
            guard bytes.allSatisfy(allowed) else { return nil }
            return String(decoding: bytes, as: UTF8.self)
        }
        let alphanumeric: (UInt8) -> Bool = { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
        let printable: (UInt8) -> Bool = { (0x21...0x7E).contains($0) }
        guard let flags = characterString(alphanumeric), let service = characterString(printable),
              let regexp = characterString(printable), let replacement = hostName(in: record, at: at) else { return nil }
        return DNSNamingRecord(order: u16(rdata, 0), preference: u16(rdata, 2), flags: flags, service: service,
                               regexp: regexp, replacement: replacement)
    }

    private static func u16(_ rdata: UnsafeBufferPointer<UInt8>, _ at: Int) -> UInt16 { UInt16(rdata[at]) << 8 | UInt16(rdata[at + 1]) }

    /// An A or AAAA record's rdata as a numeric string.
    static func address(_ record: Record) -> String? {
        let family = record.type == RecordType.a ? AF_INET : AF_INET6
        guard record.rdata.count == (family == AF_INET ? 4 : 16), let bytes = record.rdata.baseAddress else { return nil }
        return NumericAddress.text(family: family, bytes: UnsafeRawPointer(bytes))
    }
}

/// Numeric IPv4 and IPv6 addresses as text.
enum NumericAddress {
    /// `text` in its canonical form when it is a numeric address, else nil.
    static func normalized(_ text: String) -> String? {
        var v6 = in6_addr()
        if withUnsafeMutableBytes(of: &v6, { inet_pton(AF_INET, text, $0.baseAddress) }) == 1 {
            return withUnsafeBytes(of: v6) { self.text(family: AF_INET, bytes: $0.baseAddress!) }
        }
        if withUnsafeMutableBytes(of: &v6, { inet_pton(AF_INET6, text, $0.baseAddress) }) == 1 {
            return withUnsafeBytes(of: v6) { self.text(family: AF_INET6, bytes: $0.baseAddress!) }
        }
        return nil
    }

    static func text(family: Int32, bytes: UnsafeRawPointer) -> String? {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(family, bytes, &text, socklen_t(text.count)) != nil else { return nil }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Addresses through getaddrinfo (``DNSResolver/Configuration/system``): `/etc/hosts` and NSS count.
enum SystemAddresses {
    static func lookup(_ host: String) throws(DNSError) -> [String] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)  // one entry per address, not per socket type
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        defer { if let list { freeaddrinfo(list) } }
        guard status == 0 else {
            let text = String(cString: gai_strerror(status))
            let code: DNSError.Code = switch status {
            case EAI_NONAME: .noSuchName
            case callaudio_eai_nodata(), callaudio_eai_addrfamily(): .noData
            case EAI_AGAIN: .timeout
            case EAI_FAIL: .serverFailure
            default: .system
            }
            throw DNSError(code: code, status: Int(status), message: "getaddrinfo \(host): \(text)")
        }
        var v4: [String] = [], v6: [String] = []
        var entry = list
        while let current = entry, v4.count + v6.count < 2 * HostName.maximumRecords {
            entry = current.pointee.ai_next
            guard let address = current.pointee.ai_addr else { continue }
            if current.pointee.ai_family == AF_INET {
                address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                    withUnsafeBytes(of: sin.pointee.sin_addr) { if let t = NumericAddress.text(family: AF_INET, bytes: $0.baseAddress!), !v4.contains(t) { v4.append(t) } }
                }
            } else if current.pointee.ai_family == AF_INET6 {
                address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                    withUnsafeBytes(of: sin6.pointee.sin6_addr) { if let t = NumericAddress.text(family: AF_INET6, bytes: $0.baseAddress!), !v6.contains(t) { v6.append(t) } }
                }
            }
        }
        guard !(v4.isEmpty && v6.isEmpty) else { throw DNSError.noData.asked("getaddrinfo \(host)") }
        return v4 + v6
    }
}
