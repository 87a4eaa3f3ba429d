import MediaNegotiation
import Platform
import SDP
import Testing

/// A peer's 60 KB re-offer with thousands of formats and rtpmap lines: parsing it and finding
/// Opus costs work linear in its size (the answer is computed off the SIP thread and its lock).
@Suite struct HostileOfferTests {
    /// An offer of about `size` bytes: Opus among `formats` payload types and as many rtpmap lines.
    static func hugeOffer(formats: Int, rtpmaps: Int) -> String {
        let list = (0..<formats).map { String(96 + $0 % 32) }.joined(separator: " ")
        var lines = ["v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "c=IN IP4 127.0.0.1", "t=0 0", "m=audio 4000 RTP/AVP \(list) 111"]
        for index in 0..<rtpmaps { lines.append("a=rtpmap:\(96 + index % 32) x\(index)/8000") }
        lines.append("a=rtpmap:111 opus/48000/2")
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// The best of five runs of parse-and-reanswer, in a debug or release build.
    static func cost(_ text: String, previous: SessionDescription, ours: SessionDescription) -> Duration {
        var best = Duration.seconds(60)
        for _ in 0..<5 {
            let start = ContinuousClock.now
            if let offer = try? SessionDescription.parse(text) {
                _ = try? AudioSDP.reanswer(offer, peerPrevious: previous, ours: ours)
            }
            best = min(best, .now - start)
        }
        return best
    }

    @Test func aHugeReofferCostsLinearTime() throws {
        let previous = try SessionDescription.parse(Self.hugeOffer(formats: 1, rtpmaps: 0))
        let ours = AudioSDP.offer(address: try SocketAddress(host: "127.0.0.1", port: 5000), sessionID: 7)
        let small = Self.hugeOffer(formats: 1_000, rtpmaps: 500), large = Self.hugeOffer(formats: 4_000, rtpmaps: 2_000)
        #expect(large.utf8.count > 55_000)
        let smallCost = Self.cost(small, previous: previous, ours: ours), largeCost = Self.cost(large, previous: previous, ours: ours)
        print("SDP hostile re-offer: \(small.utf8.count) bytes \(smallCost), \(large.utf8.count) bytes \(largeCost)")
        // Four times the size costs at most about four times the time (quadratic was sixteen).
        #expect(largeCost <= smallCost * 8 || largeCost < .milliseconds(2))
        let parsed = try SessionDescription.parse(large)
        #expect(parsed.media.first?.payloadType(for: "opus/48000/2") == "111")
    }
}
