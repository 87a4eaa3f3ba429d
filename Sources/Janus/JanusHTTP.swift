import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A JSON value of a request body.
enum JSONValue: Encodable, Sendable {
    case string(String)
    case integer(Int)
    case identifier(UInt64)
    case bool(Bool)
    case object([String: JSONValue])

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case let .string(value): try container.encode(value)
        case let .integer(value): try container.encode(value)
        case let .identifier(value): try container.encode(value)
        case let .bool(value): try container.encode(value)
        case let .object(value): try container.encode(value)
        }
    }
}

/// Janus's HTTP API: JSON POSTs to the server, a session or a handle, and the session's long
/// poll. FoundationNetworking's `URLSession` carries it: the API is a few requests a second
/// at most, so a client of the platform's own (with its TLS and proxies) is enough, and no
/// event loop is added to the process for it.
///
/// Thread safety: safe from any thread.
struct JanusHTTP: Sendable {
    let base: URL
    /// One session for every client, never invalidated: invalidating one while a request may
    /// still start on it is the race ``fetch(_:)`` avoids. Each client's long poll holds a
    /// connection, so the cap per host is well above the legs one process runs.
    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = pollTimeout
        configuration.httpMaximumConnectionsPerHost = 1024
        return URLSession(configuration: configuration)
    }()
    private var session: URLSession { Self.session }
    /// The largest reply read; Janus's replies here are a few kilobytes.
    static let maximumReply = 1 << 20
    /// How long a request may take, and a long poll (Janus answers one within 30 s).
    static let requestTimeout: TimeInterval = 5
    static let pollTimeout: TimeInterval = 40

    init(url: String) throws(JanusError) {
        guard let base = URL(string: url), let scheme = base.scheme?.lowercased(), scheme == "http" || scheme == "https",
              base.host != nil else { throw .invalidURL(url) }
        self.base = base
    }

    /// The server's host name or address.
    var host: String { base.host ?? "" }

    /// POSTs `body` to the server (`path` empty), a session (`[session]`) or a handle
    /// (`[session, handle]`) and reads the reply.
    func post(_ path: [UInt64], _ body: [String: JSONValue]) async throws(JanusError) -> JanusMessage {
        var request = URLRequest(url: url(path), timeoutInterval: Self.requestTimeout)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        do { request.httpBody = try JSONEncoder().encode(body) } catch { throw .malformed("cannot encode a request: \(error)") }
        return try decode(JanusMessage.self, await fetch(request))
    }

    /// The session's next events (a long poll: Janus answers within 30 s, with a keepalive if
    /// nothing happened).
    func poll(_ sessionID: UInt64, maximumEvents: Int = 10) async throws(JanusError) -> [JanusMessage] {
        guard var components = URLComponents(url: url([sessionID]), resolvingAgainstBaseURL: false) else {
            throw .invalidURL(base.absoluteString)
        }
        components.queryItems = [URLQueryItem(name: "maxev", value: "\(maximumEvents)")]
        guard let pollURL = components.url else { throw .invalidURL(base.absoluteString) }
        let data = try await fetch(URLRequest(url: pollURL, timeoutInterval: Self.pollTimeout))
        // With maxev Janus sends an array; a lone message (a keepalive) may come bare.
        if let messages = try? JSONDecoder().decode([JanusMessage].self, from: data) { return messages }
        return [try decode(JanusMessage.self, data)]
    }

    private func url(_ path: [UInt64]) -> URL {
        path.reduce(base) { $0.appendingPathComponent(String($1)) }
    }

    /// Runs `request` in a task of its own, which a caller's cancellation does not reach:
    /// FoundationNetworking 6.3 crashes when a task is cancelled as it completes ("a task that is
    /// not in the registry", seen here when 32 legs hung up at once), so no request is ever
    /// cancelled; each ends by its reply or its timeout.
    private func fetch(_ request: URLRequest) async throws(JanusError) -> Data {
        let session = session
        let result = await Task { () -> Result<(Data, URLResponse), any Error> in
            do { return .success(try await session.data(for: request)) } catch { return .failure(error) }
        }.value
        let data: Data, response: URLResponse
        switch result {
        case let .success(reply): (data, response) = reply
        case let .failure(error): throw .unreachable("\(request.url?.absoluteString ?? ""): \(error.localizedDescription)")
        }
        guard let http = response as? HTTPURLResponse, http.statusCode == 200 else {
            throw .unreachable("\(request.url?.absoluteString ?? ""): HTTP \((response as? HTTPURLResponse)?.statusCode ?? 0)")
        }
        guard data.count <= Self.maximumReply else { throw .malformed("a reply of \(data.count) bytes") }
        return data
    }

    private func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws(JanusError) -> T {
        do { return try JSONDecoder().decode(type, from: data) } catch {
            throw .malformed("\(String(decoding: data.prefix(200), as: UTF8.self)): \(error)")
        }
    }
}
