import CafeDomain

/// Bytes of photos (as stored, cleaned) an account, and a client address, may upload in 24 hours
/// (`UPLOAD_QUOTA_BYTES`, `UPLOAD_QUOTA_PER_ADDRESS_BYTES`; nil: no such limit). The address's quota is
/// what keeps fresh accounts from multiplying the account's: a household or an office behind one
/// address shares it, so it is set several accounts' worth.
public struct UploadQuotas: Sendable {
    public var perAccount: Int?
    public var perAddress: Int?

    public init(perAccount: Int? = nil, perAddress: Int? = nil) {
        self.perAccount = perAccount
        self.perAddress = perAddress
    }

    /// Whose uploads a quota counts.
    public enum Kind: Sendable, Equatable { case account, address }

    enum Holder {
        case account(UserID)
        case address(String)

        var kind: Kind {
            switch self {
            case .account: .account
            case .address: .address
            }
        }

        /// What its uploads are serialised on (an advisory lock), so that parallel ones cannot pass the quota together.
        var lockKey: String {
            switch self {
            case .account(let owner): "upload \(owner.rawValue)"
            case .address(let address): "upload from \(address)"
            }
        }
    }

    /// The quotas an upload of `owner` from `address` is counted against, the account's first.
    func holders(_ owner: UserID, _ address: String?) -> [(Holder, Int)] {
        var holders: [(Holder, Int)] = []
        if let perAccount { holders.append((.account(owner), perAccount)) }
        if let perAddress, let address { holders.append((.address(address), perAddress)) }
        return holders
    }
}
