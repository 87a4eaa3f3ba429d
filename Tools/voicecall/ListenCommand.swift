import ToolSupport
import Platform
import ArgumentParser
import Foundation
import RTP
import SIP
import VoiceCall

/// `voicecall listen`: waits for one SIP call, answers it, talks until it ends.
struct ListenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listen",
        abstract: "Answer one SIP call (Opus over RTP) on a sound card or WAV files.",
        discussion: """
            Listens for an INVITE on --sip, answers the first call with Opus, runs the call with \
            voice processing until the caller hangs up, --seconds pass, q is pressed or Ctrl-C; \
            then the audio session deactivates. Audio: --device ALSA_PCM (default: ALSA's default), \
            --route-map FILE, or --input/--output WAV files on a simulated phone. Calls are answered \
            from --accept-from's addresses, from anyone with --auto-answer, and otherwise from \
            this machine (loopback) and a --registrar given as a numeric address; others get 403. \
            An offer we cannot use (no Opus, a name instead of an address) gets 488 and we keep listening.
            """
    )

    @OptionGroup var phone: PhoneOptions
    @Option(help: "Give up when no call has come within this many seconds (default: wait for ever).") var wait: Double?
    @Option(name: .customLong("accept-from"), help: ArgumentHelp(
        "Answer calls only from these numeric IP addresses (the INVITE's source: the peer, or the PBX calls come through); others get 403.",
        valueName: "ADDR[,ADDR...]"))
    var acceptFrom: String?
    @Flag(name: .customLong("auto-answer"), help: "Answer a call from anyone who can reach --sip.") var autoAnswer = false

    func validate() throws {
        if let wait { guard wait > 0 else { throw ValidationError("--wait must be > 0") } }
        if autoAnswer, acceptFrom != nil { throw ValidationError("give --accept-from or --auto-answer, not both") }
        if let acceptFrom { _ = try Self.addresses(acceptFrom) }
    }

    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        logging.bootstrap()
        // The devices are opened once before we listen: a missing device or sound server is
        // reported now, not when a call arrives.
        let endpoint = try PhoneEndpoint.checked(options: phone, defaultSIP: "0.0.0.0:5060", acceptsCallsFrom: try callFilter())
        await endpoint.controller.start()
        try await endpoint.registerIfAsked(phone)
        print("listening on sip:\(phone.user)@\(endpoint.controller.sipAddress)")
        fflush(nil)  // scripts wait for this line
        let deadline = wait.map { ContinuousClock.now + .seconds($0) }
        // A call whose answer fails (its media cannot start) is over; the next one may work.
        while true {
            let left = deadline.map { max(0, ($0 - ContinuousClock.now) / .seconds(1)) }
            guard let call = await Self.firstCall(endpoint.controller, within: left) else {
                await endpoint.controller.shutdown()
                throw CommandFailure("no call came within \(wait ?? 0) s", json: phone.json)
            }
            print("answering \(printable(call.remoteURI)) from \(call.remoteAddress) for \(call.account)")
            do {
                try await call.answer()
            } catch {
                print("cannot answer \(printable(call.remoteURI)): \(printable("\(error)")); listening on")
                fflush(nil)
                continue
            }
            let report = await PhoneCall.talk(call, on: endpoint, options: phone)
            report.print(json: phone.json)
            return
        }
    }

    /// Which INVITE sources are answered: nil (anyone) with --auto-answer.
    func callFilter() throws -> (@Sendable (SocketAddress) -> Bool)? {
        if autoAnswer { return nil }
        var allowed = try acceptFrom.map(Self.addresses) ?? []
        if acceptFrom == nil {
            allowed += try Self.addresses("127.0.0.1,::1")
            if let host = phone.registrar.flatMap({ SIPURI($0)?.host }), Self.isNumeric(host) {
                allowed += try Self.addresses(host)
            }
        }
        let (list, anyLoopback) = (allowed, acceptFrom == nil)
        return { source in
            list.contains { $0.sameHost(as: source) } || (anyLoopback && source.family == .ipv4 && source.host.hasPrefix("127."))
        }
    }

    /// Comma-separated numeric addresses (no name is looked up); brackets around IPv6 allowed.
    static func addresses(_ list: String) throws -> [SocketAddress] {
        try list.split(separator: ",").map { item in
            let host = item.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            guard isNumeric(host), let address = try? SocketAddress(host: host, port: 0) else {
                throw ValidationError("--accept-from: not a numeric IP address: \(item)")
            }
            return address
        }
    }

    static func isNumeric(_ host: String) -> Bool {
        var buffer = in6_addr()
        return inet_pton(AF_INET, host, &buffer) == 1 || inet_pton(AF_INET6, host, &buffer) == 1
    }

    /// The first incoming call, or nil after `seconds`.
    private static func firstCall(_ controller: CallController, within seconds: Double?) async -> Call? {
        await withTaskGroup(of: Call?.self) { group in
            group.addTask {
                for await call in controller.incomingCalls { return call }
                return nil
            }
            if let seconds {
                group.addTask {
                    try? await Task.sleep(for: .seconds(seconds))
                    return nil
                }
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
