//! Order statistics of samples (nearest-rank percentiles: every figure is a value actually seen).

/// The `p`-th percentile (0..=100) of `samples`, nearest rank; `NaN` when empty.
pub fn percentile(samples: &[f64], p: f64) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

pub fn median(samples: &[f64]) -> f64 {
    percentile(samples, 50.0)
}

/// The median of the `p` percentiles of `parts` equal consecutive slices of `samples` (the
/// rounds of a series measured in rounds): a burst of the machine that falls in one round moves
/// it less than the percentile of all the samples.
pub fn median_of_parts(samples: &[f64], parts: usize, p: f64) -> f64 {
    let len = samples.len() / parts.max(1);
    if len == 0 {
        return f64::NAN;
    }
    let each: Vec<f64> = samples
        .chunks_exact(len)
        .map(|part| percentile(part, p))
        .collect();
    median(&each)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let s: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&s, 50.0), 50.0);
        assert_eq!(percentile(&s, 99.0), 99.0);
        assert_eq!(percentile(&s, 100.0), 100.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn a_burst_in_one_part_moves_the_median_of_parts_less() {
        // Three parts of 1..=100; the second one's last ten samples are a burst of 50.
        let mut s: Vec<f64> = (0..3).flat_map(|_| (1..=100).map(f64::from)).collect();
        for v in &mut s[190..200] {
            *v *= 50.0;
        }
        assert_eq!(median_of_parts(&s, 3, 99.0), 99.0);
        assert!(percentile(&s, 99.0) > 4_000.0);
        assert!(median_of_parts(&s[..2], 3, 99.0).is_nan());
    }
}
