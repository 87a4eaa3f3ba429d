import Foundation
import Testing
@testable import Janus

/// Janus's replies and events as Janus 1.1.2 sends them, read into the client's types.
@Suite("Janus messages")
struct JanusMessageTests {
    static func message(_ json: String) throws -> JanusMessage {
        try JSONDecoder().decode(JanusMessage.self, from: Data(json.utf8))
    }

    @Test("A joined event gives our id, the others and the RTP address")
    func joined() throws {
        let m = try Self.message("""
            {"janus":"event","session_id":7,"transaction":"d","sender":3,"plugindata":{"plugin":"janus.plugin.audiobridge",\
            "data":{"audiobridge":"joined","room":1234,"id":56,"participants":[{"id":9,"display":"bob","setup":true,"muted":false}],\
            "rtp":{"ip":"127.0.0.1","port":21000,"payload_type":111}}}}
            """)
        let data = try #require(m.plugindata?.data)
        #expect(data.audiobridge == "joined" && data.id == 56 && data.rtp?.port == 21000 && data.rtp?.payloadType == 111)
        #expect(AudioBridgeClient.events(in: data) == [.participants([AudioBridgeParticipant(id: 9, display: "bob", setup: true, muted: false)])])
    }

    @Test("Room events: who joined or changed, who left or was kicked, who talks, the room destroyed")
    func events() throws {
        func data(_ json: String) throws -> AudioBridgeData {
            try #require(try Self.message(#"{"janus":"event","plugindata":{"plugin":"janus.plugin.audiobridge","data":"# + json + "}}").plugindata?.data)
        }
        #expect(AudioBridgeClient.events(in: try data(#"{"audiobridge":"event","room":1,"leaving":42}"#)) == [.left(42)])
        #expect(AudioBridgeClient.events(in: try data(#"{"audiobridge":"event","room":1,"kicked":43}"#)) == [.left(43)])
        #expect(AudioBridgeClient.events(in: try data(#"{"audiobridge":"talking","room":1,"id":5}"#)) == [.talking(5, true)])
        #expect(AudioBridgeClient.events(in: try data(#"{"audiobridge":"stopped-talking","room":1,"id":5}"#)) == [.talking(5, false)])
        #expect(AudioBridgeClient.events(in: try data(#"{"audiobridge":"destroyed","room":1}"#)) == [.roomDestroyed])
        #expect(AudioBridgeClient.events(in: try data(#"{"audiobridge":"event","result":"ok"}"#)) == [])
        #expect(AudioBridgeClient.events(in: try data(#"{"audiobridge":"something-new","id":5}"#)) == [])
    }

    @Test("The plugin's errors and Janus's own become typed errors")
    func errors() throws {
        let plugin = try Self.message("""
            {"janus":"success","plugindata":{"plugin":"janus.plugin.audiobridge","data":{"audiobridge":"event","error_code":485,"error":"No such room (999)"}}}
            """)
        #expect(plugin.plugindata?.data.failure == .audioBridge(code: 485, reason: "No such room (999)"))
        let api = try Self.message(#"{"janus":"error","transaction":"j","error":{"code":458,"reason":"No such session 7"}}"#)
        #expect(throws: JanusError.server(code: 458, reason: "No such session 7")) { try api.identifier() }
        #expect(try Self.message(#"{"janus":"success","transaction":"a","data":{"id":2850051529617837}}"#).identifier() == 2850051529617837)
        #expect(throws: JanusError.self) { try Self.message(#"{"janus":"success"}"#).identifier() }
    }

    @Test("A field of the wrong type, or no 'janus', is not a message", arguments: [
        #"{"janus":"event","plugindata":{"plugin":"x","data":{"audiobridge":"joined","id":"fifty-six"}}}"#,
        #"{"transaction":"a"}"#,
        #"[1,2,3]"#,
        #"not json"#,
    ])
    func malformed(_ json: String) {
        #expect(throws: (any Error).self) { try Self.message(json) }
    }

    @Test("Only http:// and https:// URLs with a host are Janus servers", arguments: ["ftp://host/janus", "janus", "http://", "", "http//x"])
    func badURLs(_ url: String) {
        #expect(throws: JanusError.invalidURL(url)) { try JanusHTTP(url: url) }
    }
}
