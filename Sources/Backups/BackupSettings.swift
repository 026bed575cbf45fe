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
        /// `BACKUP_CONFIG`: the repository a deployment's own pgBackRest configuration file names
        /// (`make cluster`'s, written by `cafe backup configure`).
        case configured(URL)

        public var description: String {
            switch self {
            case .off: "off"
            case .directory(let url): url.path
            case .s3(let location): location.description
            case .configured(let file): "the one \(file.path) names"
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
    /// (beside the embedded cluster). With a database of its own deployment (`external`, `DATABASE_URL`),
    /// `BACKUP_CONFIG` names its pgBackRest configuration instead, and without it backups are off.
    /// The error says why a value cannot be used.
    public static func repository(_ value: String?, configFile: String?, external: Bool, defaultDirectory: URL,
                                  environment: [String: String]) -> Result<Repository, BackupSettingsError> {
        if external, let value, value != "off" {
            return .failure(.init(description: "BACKUP_REPO is the embedded database's repository; with DATABASE_URL, name the deployment's pgBackRest configuration in BACKUP_CONFIG (cafe backup configure writes one)"))
        }
        if let configFile {
            guard external else { return .failure(.init(description: "BACKUP_CONFIG is for a database of its own deployment (DATABASE_URL); the embedded database's is written from BACKUP_REPO")) }
            guard configFile.hasPrefix("/") else { return .failure(.init(description: "BACKUP_CONFIG: \"\(configFile)\" is not an absolute path")) }
            return .success(value == "off" ? .off : .configured(URL(fileURLWithPath: configFile)))
        }
        if external { return .success(.off) }
        guard let value else { return .success(.directory(defaultDirectory)) }
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
