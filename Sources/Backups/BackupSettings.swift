import Foundation
import ObjectStorage

/// Where and how the database is backed up (`BACKUP_REPO`, `BACKUP_RETENTION_DAYS`, `BACKUP_MAX_LOSS`):
/// pgBackRest keeps the backups and the archived WAL in a repository, a directory or an S3 bucket.
public struct BackupSettings: Sendable, Equatable {
    public enum Repository: Sendable, Equatable, CustomStringConvertible {
        /// `BACKUP_REPO=off`: no archiving, no backups.
        case off
        case directory(URL)
        /// `s3://BUCKET[/PREFIX]`, with the photo store's AWS variables; `caBundle` is `AWS_CA_BUNDLE`.
        case s3(S3Location)

        public var description: String {
            switch self {
            case .off: "off"
            case .directory(let url): url.path
            case .s3(let location): location.description
            }
        }
    }

    public var repository: Repository
    /// Full backups are kept so that any point of the last `retentionDays` can be restored (pgBackRest's
    /// time-based retention); photo objects no row names are kept as long.
    public var retentionDays: Int
    /// `archive_timeout`: a WAL segment is archived at the latest this many seconds after its first
    /// write, which bounds what a lost disk can take with it.
    public var maxLoss: Double

    public init(repository: Repository, retentionDays: Int = 14, maxLoss: Double = 60) {
        self.repository = repository
        self.retentionDays = retentionDays
        self.maxLoss = maxLoss
    }

    public var isOn: Bool { repository != .off }

    /// `BACKUP_REPO`'s value: `off`, an absolute directory, or `s3://BUCKET[/PREFIX]`; unset, `defaultDirectory`
    /// (beside the embedded cluster), or off when there is none (an external `DATABASE_URL`, whose
    /// archiving is its deployment's). Nil with why when it cannot be used.
    public static func repository(_ value: String?, defaultDirectory: URL?, environment: [String: String]) -> Result<Repository, BackupSettingsError> {
        guard let value else { return .success(defaultDirectory.map { .directory($0) } ?? .off) }
        if value == "off" { return .success(.off) }
        if value.hasPrefix("s3://") {
            switch S3Location.parse(value, environment: environment) {
            case .success(let location): return .success(.s3(location))
            case .failure(let error): return .failure(.init(description: "BACKUP_REPO: \(error.description)"))
            }
        }
        guard value.hasPrefix("/"), !value.contains(where: { $0.isNewline || $0 == "'" }) else {
            return .failure(.init(description: "BACKUP_REPO: \"\(value)\" is not off, an absolute directory or s3://BUCKET[/PREFIX]"))
        }
        return .success(.directory(URL(fileURLWithPath: value)))
    }
}

public struct BackupSettingsError: Error, CustomStringConvertible {
    public let description: String
}
