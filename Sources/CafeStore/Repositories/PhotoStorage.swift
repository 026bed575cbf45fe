import ObjectStorage

/// Where photo bytes live (`PHOTO_STORE`): in PostgreSQL beside their row, or in an S3-compatible
/// object store, the row keeping the object's key. Each row says where its own bytes are, so rows of
/// both kinds can coexist while `cafe photos move` runs.
public enum PhotoStorage: Sendable {
    case postgres
    case s3(S3Bucket)

    public var description: String {
        switch self {
        case .postgres: "postgres"
        case .s3(let bucket): bucket.location.description
        }
    }
}

/// The object store did not answer in time or refused: nothing was stored, the client may retry.
public struct PhotoStoreUnavailable: Error, CustomStringConvertible {
    public let description: String
}

extension S3Bucket {
    /// Every call the repositories make, with the store's failure turned into this module's.
    func putPhoto(_ key: String, _ bytes: [UInt8], contentType: String) throws(PhotoStoreUnavailable) {
        do { try put(key, bytes, contentType: contentType) } catch { throw PhotoStoreUnavailable(description: error.description) }
    }

    func getPhoto(_ key: String) throws(PhotoStoreUnavailable) -> [UInt8] {
        let bytes: [UInt8]?
        do { bytes = try get(key) } catch { throw PhotoStoreUnavailable(description: error.description) }
        guard let bytes else { throw PhotoStoreUnavailable(description: "\(location)/\(key) is missing") }
        return bytes
    }
}
