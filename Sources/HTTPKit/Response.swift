/// An HTTP response: status, headers and the whole body in memory.
public struct Response: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: ResponseBody
    /// The route pattern that answered (`/v1/cafes/{id}`), set by the router; not sent. For metrics.
    public var route: String?
    /// Seconds the server waits before sending this answer, holding the connection without a
    /// thread: for a refusal to a client over its limit, so that one that ignores `Retry-After` and
    /// asks again at once costs one answer a hold instead of as many as it can send.
    public var hold: Double = 0
    /// For a write, a position in the database's log at or past its commit (`X-Commit-LSN` says the
    /// same to the client): what this process's page cache must not serve anything older than.
    public var commitPosition: UInt64?
    /// When the answer stops being true by time alone (a cafe it shows opens or closes then), in
    /// microseconds since 1970: the page cache serves it until then at most.
    public var changesAtMicros: Int64?
    /// A body sent as it is written (Server-Sent Events), instead of `body`.
    public var stream: ResponseStream?
    /// For a 101: who takes the connection over as a WebSocket.
    public var webSocket: WebSocketUpgrade?

    public init(status: Int, headers: [(String, String)] = [], body: ResponseBody = .empty) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public static let jsonContentType = "application/json; charset=utf-8"

    /// A JSON body already serialised (see `JSONWriter`).
    public static func json(_ status: Int = 200, _ body: ResponseBody) -> Response {
        Response(status: status, headers: [("Content-Type", jsonContentType)], body: body)
    }

    /// Builds a JSON body with a `JSONWriter`.
    public static func json(_ status: Int = 200, _ write: (JSONWriter) -> Void) -> Response {
        let writer = JSONWriter()
        write(writer)
        return json(status, writer.body())
    }

    /// This answer, true until `micros` at most (nil: no such moment).
    public func changing(after micros: Int64?) -> Response {
        var response = self
        response.changesAtMicros = micros
        return response
    }

    /// A 200 whose body is `stream`, sent as it comes, never cached.
    public static func stream(_ stream: ResponseStream, contentType: String) -> Response {
        var response = Response(status: 200, headers: [("Content-Type", contentType), ("Cache-Control", "no-store"),
                                                       // nginx passes this response on as it comes, whatever its proxy_buffering.
                                                       ("X-Accel-Buffering", "no")])
        response.stream = stream
        return response
    }

    /// 101: the connection becomes a WebSocket that `upgrade.handler` speaks on (the request was checked
    /// with `WebSocketHandshake.refusal`).
    public static func webSocket(_ request: Request, _ upgrade: WebSocketUpgrade) -> Response {
        var response = Response(status: 101, headers: [("Upgrade", "websocket"),
                                                       ("Sec-WebSocket-Accept", WebSocketHandshake.accept(key: request.header("sec-websocket-key") ?? ""))])
        response.webSocket = upgrade
        return response
    }

    public static func noContent() -> Response { Response(status: 204) }

    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    public func adding(header name: String, _ value: String) -> Response {
        var copy = self
        copy.headers.append((name, value))
        return copy
    }
}
