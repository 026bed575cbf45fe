import CafeDomain

/// The gram bitmaps' candidates as one bit string over their span, which a walk of an order's index tests
/// each entry against with `get_bit`: a constant-time test, where a binary search of the ids
/// (`width_bucket`) made the walk among the 5,075 candidates of a 3-digit number at 1M cafes cost 6.1
/// instead of 3.9 ms (docs/performance.md, "Keyword search").
///
/// Bit `i` stands for id `base + i`; the first and the last bit stand for no candidate, so that an id
/// clamped into `0...top` (ids outside the span land on them) never errs and never matches. At most
/// `SearchPlan.longestCandidateSpan` ids (1 MiB), which the plan checks before it walks among candidates;
/// ids spread wider (or none) give a mask that matches nothing, so that such a walk comes back short and
/// the candidates answer instead.
struct CandidateMask {
    let bytes: [UInt8]
    /// The id of bit 0: one before the first candidate.
    let base: Int64
    /// The last bit's index: one past the last candidate.
    let top: Int64

    init(ids: [Int64]) {
        guard let low = ids.min(), let high = ids.max(), low > Int64.min, SearchPlan.fitsCandidateSpan(low, high) else {
            (bytes, base, top) = ([0], 0, 0)
            return
        }
        base = low - 1
        top = high - base + 1
        var bits = [UInt8](repeating: 0, count: Int(top / 8) + 1)
        for id in ids {
            let bit = Int(id - base)
            // `get_bit` counts from each byte's lowest bit.
            bits[bit >> 3] |= 1 << UInt8(bit & 7)
        }
        bytes = bits
    }
}
