import CafeDomain
import CafeStore
import HTTPKit

// The JSON shapes of the /v1 API, written straight into the response buffer.
// Field names are the public contract (README and openapi.json): change them only with a new version.

/// Where a stored photo is served: the `imageUrl` of cafes and comments, the `Location` of an upload.
enum FileURL {
    static func path(for id: FileID) -> String { "/v1/files/\(id)" }
}

extension JSONWriter {
    func user(_ u: User) {
        object {
            field("id", u.id.description)
            field("username", u.username)
            field("email", u.email)   // users are only ever shown to themselves
            field("emailVerified", u.emailVerified)
            field("age", u.age)
            field("isAdmin", u.isAdmin)   // so the web client can offer the operator console (the API enforces it)
            field("language", u.language?.rawValue)
            field("createdAt", u.createdAt)
            field("updatedAt", u.updatedAt)
        }
    }

    /// `more` writes further fields (the operator's view adds its own).
    func cafe(_ c: Cafe, more: () -> Void = {}) {
        object {
            field("id", c.id.description)
            field("name", c.name)
            field("catchCopy", c.catchCopy)
            field("introduction", c.introduction)
            field("imageUrl", c.imageID.map(FileURL.path(for:)))
            field("imageWidth", c.imageSize?.width)
            field("imageHeight", c.imageSize?.height)
            field("publishDate", c.publishDate)
            field("commentSum", c.commentSum)
            field("commentAmount", c.commentAmount)
            field("averageStar", c.averageStar)
            field("createdAt", c.createdAt)
            field("updatedAt", c.updatedAt)
            more()
        }
    }

    /// `cafeName` for lists that span cafes (`GET /v1/comments`); `more` writes further fields.
    func comment(_ m: Comment, cafeName: String? = nil, more: () -> Void = {}) {
        object {
            field("id", m.id.description)
            field("cafeId", m.cafeID.description)
            field("userId", m.userID.description)
            field("username", m.username)
            field("detail", m.detail)
            field("star", m.star.value)
            field("imageUrl", m.imageID.map(FileURL.path(for:)))
            field("imageWidth", m.imageSize?.width)
            field("imageHeight", m.imageSize?.height)
            field("createdAt", m.createdAt)
            field("updatedAt", m.updatedAt)
            if let cafeName { field("cafeName", cafeName) }
            more()
        }
    }

    /// `{items: [...], nextCursor}`.
    func page<T>(_ items: [T], next: String?, item: (T) -> Void) {
        object {
            key("items")
            array { items.forEach(item) }
            field("nextCursor", next)
        }
    }

    func session(user u: User, token: String) {
        object {
            key("user")
            user(u)
            field("sessionToken", token)
        }
    }
}
