//! The local time zone's offset from UTC, for dates a person reads.
//!
//! Read once from the TZif file the system uses: `$TZ` when it names a zone
//! (`Europe/Berlin`, `:Asia/Shanghai`, or a path), else `/etc/localtime`.
//! `UTC`, an unknown zone, a POSIX rule string or a file that does not parse
//! mean UTC: a date shown in UTC is still right, only less local.

use std::path::PathBuf;
use std::sync::OnceLock;

/// Transition times (seconds) and the UTC offset (seconds) from each on.
#[derive(Debug, Default, PartialEq, Eq)]
struct Zone {
    /// (from, offset), sorted by `from`.
    changes: Vec<(i64, i64)>,
    /// The offset before the first change (or always, with none).
    first: i64,
}

/// Seconds to add to UTC for the local time at `ms` (epoch milliseconds).
pub fn offset_at(ms: i64) -> i64 {
    static ZONE: OnceLock<Zone> = OnceLock::new();
    ZONE.get_or_init(|| {
        zone_file().and_then(|p| read(&p)).and_then(|b| parse(&b)).unwrap_or_default()
    })
    .offset(ms.div_euclid(1000))
}

impl Zone {
    fn offset(&self, secs: i64) -> i64 {
        match self.changes.partition_point(|(from, _)| *from <= secs) {
            0 => self.first,
            n => self.changes[n - 1].1,
        }
    }
}

/// A zone file's bytes: a regular file (through links, as
/// `/etc/localtime` is one) of at most 1 MiB; never a device or a FIFO.
fn read(path: &std::path::Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > 1 << 20 {
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path).ok()?.take(1 << 20).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

fn zone_file() -> Option<PathBuf> {
    match std::env::var("TZ") {
        Err(_) => Some(PathBuf::from("/etc/localtime")),
        Ok(tz) => {
            let name = tz.strip_prefix(':').unwrap_or(&tz);
            let named = !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || "/_-+".contains(c))
                && !name.split('/').any(|part| part == "..");
            if name.starts_with('/') {
                Some(PathBuf::from(name))
            } else if named {
                Some(PathBuf::from("/usr/share/zoneinfo").join(name))
            } else {
                None
            }
        }
    }
}

/// A TZif file (RFC 8536), version 1 data or, when present, the 64-bit data
/// of version 2 and later.
fn parse(bytes: &[u8]) -> Option<Zone> {
    let header = |at: usize| -> Option<[usize; 6]> {
        if bytes.get(at..at + 4)? != b"TZif" {
            return None;
        }
        let mut counts = [0; 6];
        for (i, c) in counts.iter_mut().enumerate() {
            let b = bytes.get(at + 20 + i * 4..at + 24 + i * 4)?;
            *c = u32::from_be_bytes(b.try_into().ok()?) as usize;
        }
        Some(counts)
    };
    let [isut, isstd, leap, time, types, chars] = header(0)?;
    let v1_len = time * 5 + types * 6 + chars + leap * 8 + isstd + isut;
    let (at, width) = if bytes[4] >= b'2' { (44 + v1_len, 8) } else { (0, 4) };
    let [_, _, _, time, types, _] = header(at)?;
    let data = at + 44;
    let times = bytes.get(data..data + time * width)?;
    let indices = bytes.get(data + time * width..data + time * (width + 1))?;
    let infos = bytes.get(data + time * (width + 1)..data + time * (width + 1) + types * 6)?;
    let offset = |i: usize| -> Option<i64> {
        let b = infos.get(i * 6..i * 6 + 4)?;
        Some(i64::from(i32::from_be_bytes(b.try_into().ok()?)))
    };
    let mut changes = Vec::with_capacity(time);
    for (i, chunk) in times.chunks_exact(width).enumerate() {
        let from = if width == 8 {
            i64::from_be_bytes(chunk.try_into().ok()?)
        } else {
            i64::from(i32::from_be_bytes(chunk.try_into().ok()?))
        };
        changes.push((from, offset(usize::from(indices[i]))?));
    }
    changes.sort_by_key(|c| c.0);
    Some(Zone { changes, first: if types > 0 { offset(0)? } else { 0 } })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version 1 TZif file: UTC+1, then UTC+2 from `at` on.
    fn tzif(at: i32) -> Vec<u8> {
        let mut b = b"TZif".to_vec();
        b.extend([0u8; 16]);
        for count in [0u32, 0, 0, 1, 2, 4] {
            b.extend(count.to_be_bytes());
        }
        b.extend(at.to_be_bytes());
        b.push(1);
        for (off, dst) in [(3600i32, 0u8), (7200, 1)] {
            b.extend(off.to_be_bytes());
            b.extend([dst, 0]);
        }
        b.extend(b"CET\0");
        b
    }

    #[test]
    fn offsets_change_at_their_transitions() {
        let zone = parse(&tzif(1000)).unwrap();
        assert_eq!(zone.offset(999), 3600);
        assert_eq!(zone.offset(1000), 7200);
        assert_eq!(zone.offset(i64::MAX), 7200);
    }

    #[test]
    fn a_damaged_file_is_no_zone() {
        let good = tzif(1000);
        for cut in 0..good.len() {
            let _ = parse(&good[..cut]);
        }
        assert!(parse(b"TZjf").is_none());
        assert!(parse(&good[..good.len() - 8]).is_none());
    }

    #[test]
    fn the_system_zone_parses_when_there_is_one() {
        for name in ["/usr/share/zoneinfo/Europe/Berlin", "/usr/share/zoneinfo/Asia/Shanghai"] {
            let Ok(bytes) = std::fs::read(name) else { continue };
            let zone = parse(&bytes).expect(name);
            // 2026-07-01: summer time in Berlin, none in Shanghai.
            let july = 1_782_864_000;
            let want = if name.ends_with("Berlin") { 7200 } else { 28_800 };
            assert_eq!(zone.offset(july), want, "{name}");
        }
    }
}
