/// gzip for the answers that gain from it: JSON and text of at least `minimumBytes`, to a request whose
/// `Accept-Encoding` takes gzip. Every such answer says `Vary: Accept-Encoding`, compressed or not, so a
/// cache in front keeps the two forms apart. Photos and other images are never recompressed (their
/// formats are compressed already), and a body gzip does not shrink is sent as it is.
///
/// The gzip form is kept with the body (`ResponseBody.gzipped`): a page the cache holds is compressed
/// when it is stored, and the web client's files when they are loaded, so a hit costs no compression;
/// an uncached page is compressed for each answer. A compressed answer's `ETag` is weak (`W/"…"`): the
/// bytes differ from the plain form's, and `If-None-Match` compares weakly, so either form revalidates.
public enum ResponseCompression {
    /// Smaller bodies gain too little to pay for the gzip header and the work (nginx's default is 20 bytes;
    /// Cloudflare and most CDNs leave bodies under about 1 KB alone).
    public static let minimumBytes = 1024

    /// The answer as sent to `request`: compressed when it qualifies and the client takes gzip.
    static func encoded(_ response: Response, for request: Request) -> Response {
        guard qualifies(response) else { return response }
        var response = response
        response.headers.append(("Vary", "Accept-Encoding"))
        guard acceptsGzip(request.header("accept-encoding")), let compressed = response.body.gzipped else { return response }
        response.body = compressed
        response.headers.append(("Content-Encoding", "gzip"))
        if let index = response.headers.firstIndex(where: { $0.0.lowercased() == "etag" }), response.headers[index].1.hasPrefix("\"") {
            response.headers[index].1 = "W/" + response.headers[index].1
        }
        return response
    }

    /// Makes the gzip form of an answer that would be sent compressed, now: for one kept (the page cache).
    static func prepare(_ response: Response) {
        if qualifies(response) { _ = response.body.gzipped }
    }

    /// A successful answer with a body worth compressing, of a type that compresses, not encoded already.
    static func qualifies(_ response: Response) -> Bool {
        (200..<300).contains(response.status) && response.body.count >= minimumBytes
            && response.header("content-encoding") == nil && isCompressible(response.header("content-type"))
    }

    /// JSON, text, JavaScript and SVG; not images, fonts or anything else.
    static func isCompressible(_ contentType: String?) -> Bool {
        guard let type = contentType?.lowercased() else { return false }
        return type.hasPrefix("text/") || type.hasPrefix("application/json") || type.hasPrefix("application/problem+json")
            || type.hasPrefix("application/javascript") || type.hasPrefix("image/svg+xml")
    }

    /// Whether an `Accept-Encoding` value (RFC 9110 12.5.3) takes gzip: `gzip` (or `x-gzip`, or `*` when
    /// gzip is not named) with a weight above zero.
    static func acceptsGzip(_ acceptEncoding: String?) -> Bool {
        guard let acceptEncoding else { return false }
        var wildcard = false
        for item in acceptEncoding.split(separator: ",") {
            let parts = item.split(separator: ";")
            guard let coding = parts.first?.trimming([" ", "\t"]).lowercased() else { continue }
            let weighted = parts.dropFirst().first { $0.trimming([" ", "\t"]).lowercased().hasPrefix("q=") }
            let weight = weighted.flatMap { Double($0.trimming([" ", "\t"]).dropFirst(2)) } ?? 1
            if coding == "gzip" || coding == "x-gzip" { return weight > 0 }
            if coding == "*" { wildcard = weight > 0 }
        }
        return wildcard
    }
}
