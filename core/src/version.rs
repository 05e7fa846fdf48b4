//! Agent versions (`MAJOR.MINOR.PATCH`) and the update rule: never cross a major version.

use std::cmp::Ordering;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl Version {
    pub fn parse(s: &str) -> Option<Version> {
        let mut parts = s.trim().split('.').map(|p| p.parse::<u32>().ok());
        let v = Version {
            major: parts.next()??,
            minor: parts.next()??,
            patch: parts.next()??,
        };
        parts.next().is_none().then_some(v)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The newest version in `latest` of the same major version as `current`, if newer.
pub fn update_target(current: Version, latest: &[Version]) -> Option<Version> {
    latest
        .iter()
        .filter(|v| v.major == current.major && v.cmp(&&current) == Ordering::Greater)
        .max()
        .copied()
}

/// Parses a comma-separated catalogue such as `3.4.1,2.9.0`.
pub fn parse_catalogue(s: &str) -> Result<Vec<Version>, String> {
    s.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            Version::parse(p).ok_or_else(|| {
                format!(
                    "`{}` is not a version of the form MAJOR.MINOR.PATCH",
                    p.trim()
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_case;

    #[test_case]
    fn update_never_crosses_a_major_version() {
        let latest = parse_catalogue("3.4.1, 2.9.0").unwrap();
        let v = |s| Version::parse(s).unwrap();
        assert_eq!(update_target(v("3.4.0"), &latest), Some(v("3.4.1")));
        assert_eq!(update_target(v("2.1.0"), &latest), Some(v("2.9.0")));
        assert_eq!(update_target(v("3.4.1"), &latest), None);
        assert_eq!(update_target(v("3.5.0"), &latest), None);
        assert_eq!(update_target(v("1.0.0"), &latest), None);
        assert!(parse_catalogue("3.4").is_err());
        assert_eq!(Version::parse("1.2.3.4"), None);
    }
}
