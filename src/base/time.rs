//! Epoch milliseconds, ISO 8601 dates read from hand-written frontmatter,
//! and relative ages ("3 days ago" / "3 天前").
//!
//! std covers all of it: civil-date arithmetic is the classic days-from-civil
//! formula, so no calendar crate is needed.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds in a day.
pub const DAY_MS: i64 = 86_400_000;

/// Milliseconds since the Unix epoch for a `SystemTime` (0 before 1970).
pub fn epoch_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// Nanoseconds since the Unix epoch for a `SystemTime` (0 before 1970), as
/// file times are compared.
pub fn epoch_ns(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Nanoseconds since the Unix epoch, now.
pub fn now_ns() -> u64 {
    epoch_ns(SystemTime::now())
}

/// The proleptic Gregorian date of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z.saturating_add(719_468);
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Epoch milliseconds as an ISO 8601 date and time in UTC, to the minute:
/// what a person reads where a number would mean nothing.
///
/// ```
/// assert_eq!(mem::base::time::iso_minute(0), "1970-01-01 00:00Z");
/// assert_eq!(mem::base::time::iso_minute(1_796_132_239_501), "2026-12-01 13:37Z");
/// ```
pub fn iso_minute(ms: i64) -> String {
    let (days, rest) = (ms.div_euclid(DAY_MS), ms.rem_euclid(DAY_MS));
    let (y, m, d) = civil_from_days(days);
    let minutes = rest / 60_000;
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}Z", minutes / 60, minutes % 60)
}

/// The UTC day of epoch milliseconds, `2026-12-01`, read back as a day
/// count by [`parse_day`].
///
/// ```
/// use mem::base::time::{iso_day, parse_day};
/// assert_eq!(iso_day(1_796_132_239_501), "2026-12-01");
/// assert_eq!(parse_day(&iso_day(-1)), Some(-1));
/// ```
pub fn iso_day(ms: i64) -> String {
    let (y, m, d) = civil_from_days(ms.div_euclid(DAY_MS));
    format!("{y:04}-{m:02}-{d:02}")
}

/// Days since 1970-01-01 of a date [`iso_day`] wrote (a year of 4 to 10
/// digits, or a sign before it).
pub fn parse_day(s: &str) -> Option<i64> {
    let (rest, d) = s.rsplit_once('-')?;
    let (year, m) = rest.rsplit_once('-')?;
    let digits = year.strip_prefix('-').unwrap_or(year);
    let sane = (4..=10).contains(&year.len()) && digits.bytes().all(|b| b.is_ascii_digit());
    let (m, d) = (num(m, 2)?, num(d, 2)?);
    (sane && !digits.is_empty() && (1..=12).contains(&m) && (1..=31).contains(&d))
        .then(|| Some(days_from_civil(year.parse().ok()?, m, d)))?
}

/// `ms` as ISO 8601 in UTC to the second, `2026-03-01T10:20:30Z`: the
/// form `--json` adds beside every epoch-ms time.
pub fn iso_second(ms: i64) -> String {
    let (days, rest) = (ms.div_euclid(DAY_MS), ms.rem_euclid(DAY_MS));
    let (y, m, d) = civil_from_days(days);
    let s = rest / 1000;
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", s / 3600, s / 60 % 60, s % 60)
}

/// `ms` as ISO 8601 in UTC to the millisecond, `2026-12-03T06:47:08.497Z`:
/// how `mem` writes `created` and `updated` in a new memory.
///
/// ```
/// assert_eq!(mem::base::time::iso_ms(1_796_280_428_497), "2026-12-03T06:47:08.497Z");
/// ```
pub fn iso_ms(ms: i64) -> String {
    DateForm::default().format(ms)
}

/// `ms` as a file name part that sorts by time and reads as a date:
/// ISO 8601 in UTC with `-` for `:` (which some file systems refuse),
/// `2026-12-03T06-47-08.497Z`. Read back by [`parse_stamp`].
///
/// ```
/// assert_eq!(mem::base::time::stamp(1_796_280_428_497), "2026-12-03T06-47-08.497Z");
/// ```
pub fn stamp(ms: i64) -> String {
    iso_ms(ms).replace(':', "-")
}

/// The time of a file name part written by [`stamp`], or of the epoch
/// milliseconds earlier versions wrote there.
///
/// ```
/// use mem::base::time::{parse_stamp, stamp};
/// assert_eq!(parse_stamp(&stamp(1_796_280_428_497)), Some(1_796_280_428_497));
/// assert_eq!(parse_stamp("1796280428497"), Some(1_796_280_428_497));
/// assert_eq!(parse_stamp("2026-12-03"), None);
/// ```
pub fn parse_stamp(s: &str) -> Option<i64> {
    if !s.is_empty() && s.len() <= 18 && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse().ok();
    }
    // `-MM-DDTHH-MM-SS.mmmZ` after the year, which has four digits or more
    // (a forged `updated` far in the future still names a version that
    // reads back), or a sign before the year.
    let tail_at = s.len().checked_sub(20).filter(|&at| s.is_char_boundary(at))?;
    let (year, tail) = s.split_at(tail_at);
    let b = tail.as_bytes();
    let shape = b[0] == b'-'
        && b[3] == b'-'
        && b[6] == b'T'
        && b[9] == b'-'
        && b[12] == b'-'
        && b[15] == b'.'
        && b[19] == b'Z';
    let digits = year.strip_prefix('-').unwrap_or(year);
    if !shape || year.len() < 4 || digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let y: i64 = year.parse().ok()?;
    let field = |at: usize, width: usize| num(&tail[at..at + width], width);
    let (m, d) = (field(1, 2)?, field(4, 2)?);
    let (h, min, sec, ms) = (field(7, 2)?, field(10, 2)?, field(13, 2)?, field(16, 3)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || h > 23 || min > 59 || sec > 60 {
        return None;
    }
    let time = ((h * 60 + min) * 60 + sec) * 1000 + ms;
    days_from_civil(y, m, d).checked_mul(DAY_MS)?.checked_add(time)
}

/// How a date in frontmatter is spelled, so that a rewrite keeps its form:
/// epoch milliseconds, a date, or a date and time with its separator,
/// precision and offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateForm {
    /// `1796280428497`.
    EpochMs,
    /// `2026-12-03`.
    Date,
    /// `2026-12-03T06:47:08.497Z` and its variants.
    DateTime {
        /// `T` or a space between date and time.
        sep: char,
        /// Seconds are written.
        seconds: bool,
        /// Digits after the seconds (0 to 9).
        fraction: u8,
        /// How the offset is written.
        zone: Zone,
    },
}

/// The offset part of a date and time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zone {
    /// No offset: read as UTC.
    None,
    /// `Z`.
    Utc,
    /// `+08:00` (`colon`) or `+0800`, this many minutes east of UTC.
    Offset { minutes: i32, colon: bool },
}

impl Default for DateForm {
    /// ISO 8601 in UTC to the millisecond: the form of a new memory.
    fn default() -> DateForm {
        DateForm::DateTime { sep: 'T', seconds: true, fraction: 3, zone: Zone::Utc }
    }
}

impl DateForm {
    /// The form of a date as written, when it is one `mem` reads.
    ///
    /// ```
    /// use mem::base::time::DateForm;
    /// let form = DateForm::of("2026-03-01 10:20+08:00").unwrap();
    /// assert_eq!(form.format(1_796_280_428_497), "2026-12-03 14:47+08:00");
    /// assert_eq!(DateForm::of("1796280428497"), Some(DateForm::EpochMs));
    /// assert_eq!(DateForm::of("soon"), None);
    /// ```
    pub fn of(s: &str) -> Option<DateForm> {
        let s = s.trim();
        if s.bytes().all(|b| b.is_ascii_digit()) {
            return (!s.is_empty()).then_some(DateForm::EpochMs);
        }
        parse_iso(s)?;
        if s.len() == 10 {
            return Some(DateForm::Date);
        }
        let sep = s[10..].chars().next()?;
        let time = &s[11..];
        let (clock, zone) = if let Some(c) = time.strip_suffix(['Z', 'z']) {
            (c, Zone::Utc)
        } else if let Some(pos) = time.rfind(['+', '-']) {
            let (c, off) = time.split_at(pos);
            let digits = off[1..].replace(':', "");
            let hours: i32 = digits.get(..2)?.parse().ok()?;
            let mins: i32 =
                digits.get(2..).filter(|m| !m.is_empty()).map_or(Some(0), |m| m.parse().ok())?;
            let minutes = (hours * 60 + mins) * if off.starts_with('-') { -1 } else { 1 };
            (c.trim_end(), Zone::Offset { minutes, colon: off.contains(':') })
        } else {
            (time, Zone::None)
        };
        let mut parts = clock.split(':');
        let (_, _, sec) = (parts.next(), parts.next(), parts.next());
        let fraction = sec.and_then(|s| s.split_once('.')).map_or(0, |(_, f)| f.len().min(9) as u8);
        Some(DateForm::DateTime { sep, seconds: sec.is_some(), fraction, zone })
    }

    /// `ms` written in this form (the date or time shown in its offset).
    pub fn format(&self, ms: i64) -> String {
        let DateForm::DateTime { sep, seconds, fraction, zone } = *self else {
            return match self {
                DateForm::EpochMs => ms.to_string(),
                _ => {
                    let (y, m, d) = civil_from_days(ms.div_euclid(DAY_MS));
                    format!("{y:04}-{m:02}-{d:02}")
                }
            };
        };
        let shift = match zone {
            Zone::Offset { minutes, .. } => i64::from(minutes) * 60_000,
            _ => 0,
        };
        let local = ms.saturating_add(shift);
        let (days, rest) = (local.div_euclid(DAY_MS), local.rem_euclid(DAY_MS));
        let (y, m, d) = civil_from_days(days);
        let s = rest / 1000;
        let mut out = format!("{y:04}-{m:02}-{d:02}{sep}{:02}:{:02}", s / 3600, s / 60 % 60);
        if seconds {
            out.push_str(&format!(":{:02}", s % 60));
            if fraction > 0 {
                let nanos = format!("{:03}000000", rest % 1000);
                out.push('.');
                out.push_str(&nanos[..usize::from(fraction)]);
            }
        }
        match zone {
            Zone::None => {}
            Zone::Utc => out.push('Z'),
            Zone::Offset { minutes, colon } => {
                let sign = if minutes < 0 { '-' } else { '+' };
                let (h, m) = (minutes.abs() / 60, minutes.abs() % 60);
                out.push_str(&if colon {
                    format!("{sign}{h:02}:{m:02}")
                } else {
                    format!("{sign}{h:02}{m:02}")
                });
            }
        }
        out
    }
}

/// Epoch milliseconds as the local date and time, to the minute
/// (`2026-12-01 14:37`): the time zone is the system's (see
/// [`crate::base::zone`]).
pub fn local_minute(ms: i64) -> String {
    let local = ms.saturating_add(crate::base::zone::offset_at(ms).saturating_mul(1000));
    let (days, rest) = (local.div_euclid(DAY_MS), local.rem_euclid(DAY_MS));
    let (y, m, d) = civil_from_days(days);
    let minutes = rest / 60_000;
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}", minutes / 60, minutes % 60)
}

/// Now and the language: what a report needs to say when something was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    pub now_ms: i64,
    pub lang: Lang,
}

impl Clock {
    /// `ms` as a person reads it: the local date and time, and how long ago
    /// (`2026-06-09 13:03, 5 months ago`).
    pub fn when(&self, ms: i64) -> String {
        format!("{}, {}", local_minute(ms), relative_age(ms, self.now_ms, self.lang))
    }
}

/// Days since 1970-01-01 for a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Parse an ISO 8601 date or date-time into epoch milliseconds.
///
/// Accepts `2026-03-01`, `2026-03-01T10:20`, `2026-03-01 10:20:30.5Z`,
/// `2026-03-01T10:20:30+08:00` (also `+0800` and `+08`). A date-time
/// without offset is read as UTC.
///
/// ```
/// assert_eq!(mem::base::time::parse_iso("1970-01-02"), Some(86_400_000));
/// assert_eq!(mem::base::time::parse_iso("1970-01-01T01:00:00+01:00"), Some(0));
/// assert_eq!(mem::base::time::parse_iso("yesterday"), None);
/// ```
pub fn parse_iso(s: &str) -> Option<i64> {
    let s = s.trim();
    let (date, rest) = s.split_at(s.find(['T', 't', ' ']).unwrap_or(s.len()));
    let mut parts = date.split('-');
    let y: i64 = num(parts.next()?, 4)?;
    let m: i64 = num(parts.next()?, 2)?;
    let d: i64 = num(parts.next()?, 2)?;
    if parts.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let days = days_from_civil(y, m, d);
    let time_ms = if rest.is_empty() { 0 } else { parse_time(&rest[1..])? };
    Some(days * DAY_MS + time_ms)
}

/// `HH:MM[:SS[.fff]][Z|±HH:MM]` → milliseconds after midnight UTC.
fn parse_time(s: &str) -> Option<i64> {
    let s = s.trim();
    let (clock, offset_ms) = if let Some(c) = s.strip_suffix(['Z', 'z']) {
        (c, 0)
    } else if let Some(pos) = s.rfind(['+', '-']) {
        let (c, off) = s.split_at(pos);
        let sign = if off.starts_with('-') { -1 } else { 1 };
        let off = off[1..].replace(':', "");
        if off.len() != 4 && off.len() != 2 {
            return None;
        }
        let h: i64 = num(&off[..2], 2)?;
        let m: i64 = if off.len() == 4 { num(&off[2..], 2)? } else { 0 };
        (c.trim_end(), sign * (h * 60 + m) * 60_000)
    } else {
        (s, 0)
    };
    let mut it = clock.split(':');
    let h: i64 = num(it.next()?, 2)?;
    let m: i64 = num(it.next()?, 2)?;
    let sec_ms = match it.next() {
        Some(sec) => {
            let (whole, frac) = sec.split_once('.').unwrap_or((sec, ""));
            let whole: i64 = num(whole, 2)?;
            let frac: i64 = format!("{frac:0<3}").get(..3)?.parse().ok()?;
            whole * 1000 + frac
        }
        None => 0,
    };
    if it.next().is_some() || h > 23 || m > 59 || sec_ms >= 61_000 {
        return None;
    }
    Some((h * 3600 + m * 60) * 1000 + sec_ms - offset_ms)
}

fn num(s: &str, width: usize) -> Option<i64> {
    (s.len() == width && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok())?
}

/// The language relative ages are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    En,
    Zh,
}

/// "just now", "5 minutes ago", "3 days ago", "2 months ago" — or the Chinese.
///
/// ```
/// use mem::base::time::{relative_age, Lang};
/// assert_eq!(relative_age(0, 3 * 86_400_000, Lang::En), "3 days ago");
/// assert_eq!(relative_age(0, 3 * 86_400_000, Lang::Zh), "3 天前");
/// ```
pub fn relative_age(then_ms: i64, now_ms: i64, lang: Lang) -> String {
    let secs = now_ms.saturating_sub(then_ms) / 1000;
    if secs < 0 {
        return match lang {
            Lang::En => "in the future".into(),
            Lang::Zh => "未来".into(),
        };
    }
    let (n, en, zh) = match secs {
        0..60 => return if lang == Lang::En { "just now".into() } else { "刚刚".into() },
        60..3600 => (secs / 60, "minute", "分钟"),
        3600..86_400 => (secs / 3600, "hour", "小时"),
        86_400..2_592_000 => (secs / 86_400, "day", "天"),
        2_592_000..31_536_000 => (secs / 2_592_000, "month", "个月"),
        _ => (secs / 31_536_000, "year", "年"),
    };
    match lang {
        Lang::En if n == 1 => format!("1 {en} ago"),
        Lang::En => format!("{n} {en}s ago"),
        Lang::Zh => format!("{n} {zh}前"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_day_counts_convert_both_ways() {
        for days in (-800_000..800_000).step_by(97) {
            let (y, m, d) = civil_from_days(days);
            assert!((1..=12).contains(&m) && (1..=31).contains(&d), "{days}");
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
        assert_eq!(iso_minute(parse_iso("2024-02-29T23:59:00Z").unwrap()), "2024-02-29 23:59Z");
    }

    #[test]
    fn iso_dates() {
        assert_eq!(parse_iso("1970-01-01"), Some(0));
        assert_eq!(parse_iso("2026-11-30"), Some(1_795_996_800_000));
        assert_eq!(parse_iso("2026-11-30T08:00:00Z"), Some(1_795_996_800_000 + 8 * 3_600_000));
        assert_eq!(parse_iso("2026-11-30T08:00:00+08:00"), Some(1_795_996_800_000));
        assert_eq!(parse_iso("2026-11-30 08:00"), Some(1_795_996_800_000 + 8 * 3_600_000));
        assert_eq!(parse_iso("2026-11-30T00:00:00.250Z"), Some(1_795_996_800_250));
        for bad in [
            "",
            "2026",
            "2026-13-01",
            "2026-1-1",
            "2026-11-30T25:00",
            "2026-11-30Tx",
            "１９７０-01-01",
        ] {
            assert_eq!(parse_iso(bad), None, "{bad}");
        }
    }

    #[test]
    fn each_form_writes_back_as_it_reads() {
        let ms = 1_796_280_428_497;
        for (written, now) in [
            ("1791512156858", "1796280428497"),
            ("2026-11-30", "2026-12-03"),
            ("2026-11-30T08:00:00Z", "2026-12-03T06:47:08Z"),
            ("2026-11-30T08:00:00.250Z", "2026-12-03T06:47:08.497Z"),
            ("2026-11-30 08:00", "2026-12-03 06:47"),
            ("2026-11-30t08:00:00.5z", "2026-12-03t06:47:08.4Z"),
            ("2026-11-30T08:00:00+08:00", "2026-12-03T14:47:08+08:00"),
            ("2026-11-30T08:00:00-0530", "2026-12-03T01:17:08-0530"),
            ("2026-11-30T08:00:00+08", "2026-12-03T14:47:08+0800"),
            ("2026-11-30T08:00:00.123456", "2026-12-03T06:47:08.497000"),
        ] {
            let form = DateForm::of(written).unwrap_or_else(|| panic!("{written}"));
            assert_eq!(form.format(ms), now, "{written}");
            // What is written reads back as the time it says (to its precision).
            let back = parse_iso(now).or_else(|| now.parse().ok()).unwrap();
            assert!((ms - back).abs() < DAY_MS, "{now}");
            assert_eq!(DateForm::of(now), Some(form), "{now}");
        }
        assert_eq!(DateForm::of("yesterday"), None);
        assert_eq!(DateForm::of(""), None);
        assert_eq!(iso_ms(ms), "2026-12-03T06:47:08.497Z");
        assert_eq!(parse_iso(&iso_ms(ms)), Some(ms));
    }

    #[test]
    fn stamps_sort_by_time_and_read_back() {
        let times = [0, 999, 1_000, 86_399_999, 1_796_280_428_497, 253_402_300_799_999];
        let stamps: Vec<String> = times.iter().map(|&t| stamp(t)).collect();
        let mut sorted = stamps.clone();
        sorted.sort();
        assert_eq!(sorted, stamps);
        for (t, s) in times.iter().zip(&stamps) {
            assert_eq!(parse_stamp(s), Some(*t), "{s}");
        }
        // Whatever a forged `updated` says, its name reads back.
        for t in [i64::MAX, i64::MIN / 2, -1, -62_167_219_200_001] {
            assert_eq!(parse_stamp(&stamp(t)), Some(t), "{}", stamp(t));
        }
        for bad in
            ["", "2026-12-03T06:47:08.497Z", "2026-12-03T06-47-08.497", "x".repeat(24).as_str()]
        {
            assert_eq!(parse_stamp(bad), None, "{bad}");
        }
    }

    #[test]
    fn ages() {
        let m = 60_000;
        assert_eq!(relative_age(0, 30_000, Lang::En), "just now");
        assert_eq!(relative_age(0, m, Lang::En), "1 minute ago");
        assert_eq!(relative_age(0, 90 * m, Lang::En), "1 hour ago");
        assert_eq!(relative_age(0, 40 * DAY_MS, Lang::Zh), "1 个月前");
        assert_eq!(relative_age(0, 800 * DAY_MS, Lang::En), "2 years ago");
        assert_eq!(relative_age(DAY_MS, 0, Lang::En), "in the future");
    }
}
