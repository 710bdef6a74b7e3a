//! Invocation durations as a fixed histogram, so per-minute counts from several workers add up
//! bucket by bucket and percentiles can be read from the sum. A percentile is reported as the
//! upper bound of the bucket it falls in (at most ~25 % above the true value with these
//! bounds); durations beyond the last bound count in an overflow bucket reported as that bound.

/// Upper bounds of the buckets, in milliseconds; one more bucket holds everything longer.
pub const BUCKET_BOUNDS_MS: [u64; 24] = [
    1, 2, 3, 5, 8, 10, 15, 25, 40, 60, 100, 150, 250, 400, 600, 1_000, 1_500, 2_500, 4_000, 6_000,
    10_000, 30_000, 60_000, 300_000,
];

/// Buckets in a histogram: the bounds and the overflow.
pub const BUCKETS: usize = BUCKET_BOUNDS_MS.len() + 1;

/// The bucket a duration falls in.
pub fn bucket_of(duration_ms: u64) -> usize {
    BUCKET_BOUNDS_MS
        .iter()
        .position(|&bound| duration_ms <= bound)
        .unwrap_or(BUCKET_BOUNDS_MS.len())
}

/// The `q`-quantile (0 < q ≤ 1) of a histogram as its bucket's upper bound; None when empty.
pub fn percentile(buckets: &[i64], q: f64) -> Option<u64> {
    let total: i64 = buckets.iter().map(|&c| c.max(0)).sum();
    if total == 0 {
        return None;
    }
    // The smallest rank at or above q of the observations (nearest-rank method).
    let rank = ((q * total as f64).ceil() as i64).clamp(1, total);
    let mut seen = 0;
    for (i, &count) in buckets.iter().enumerate() {
        seen += count.max(0);
        if seen >= rank {
            return Some(BUCKET_BOUNDS_MS[i.min(BUCKET_BOUNDS_MS.len() - 1)]);
        }
    }
    BUCKET_BOUNDS_MS.last().copied()
}

/// Adds `other` into `into` bucket by bucket (a shorter one counts as zeros).
pub fn add(into: &mut Vec<i64>, other: &[i64]) {
    if into.len() < other.len() {
        into.resize(other.len(), 0);
    }
    for (a, b) in into.iter_mut().zip(other) {
        *a += b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_fall_in_the_first_bucket_whose_bound_they_do_not_exceed() {
        for (ms, bucket) in [
            (0, 0),
            (1, 0),
            (2, 1),
            (4, 3),
            (5, 3),
            (6, 4),
            (1_000, 15),
            (1_001, 16),
            (300_000, 23),
            (300_001, 24),
        ] {
            assert_eq!(bucket_of(ms), bucket, "{ms} ms");
        }
    }

    #[test]
    fn percentiles_are_the_upper_bound_of_the_bucket_holding_the_rank() {
        let mut buckets = vec![0; BUCKETS];
        // 90 invocations of ~10 ms, 9 of ~250 ms, 1 of ~6 s.
        buckets[bucket_of(10)] = 90;
        buckets[bucket_of(250)] = 9;
        buckets[bucket_of(6_000)] = 1;
        assert_eq!(percentile(&buckets, 0.5), Some(10));
        assert_eq!(percentile(&buckets, 0.9), Some(10));
        assert_eq!(percentile(&buckets, 0.95), Some(250));
        assert_eq!(percentile(&buckets, 0.99), Some(250));
        assert_eq!(percentile(&buckets, 1.0), Some(6_000));
        assert_eq!(percentile(&[0; BUCKETS], 0.5), None);
        let mut overflow = vec![0; BUCKETS];
        overflow[BUCKETS - 1] = 1;
        assert_eq!(percentile(&overflow, 0.5), Some(300_000));
    }

    #[test]
    fn histograms_add_bucket_by_bucket() {
        let mut a = vec![1, 2];
        add(&mut a, &[3, 4, 5]);
        assert_eq!(a, [4, 6, 5]);
    }
}
