//! Timestamps: epoch milliseconds inside, ISO-8601 (`2026-01-01T00:00:00.000Z`) outside.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch by the system clock.
pub fn now_ms() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_millis() as i64,
        Err(e) => -(e.duration().as_millis() as i64),
    }
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `new Date(ms).toISOString()` for years 0–9999.
pub fn format_iso(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    if !(0..=9999).contains(&y) {
        // Outside four-digit years (never a real clock): the general formatter.
        return format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            y,
            m,
            d,
            rem / 3_600_000,
            rem / 60_000 % 60,
            rem / 1000 % 60,
            rem % 1000
        );
    }
    // Every record carries three timestamps and is formatted at each transition: digits by hand
    // (`format!` with padding was a visible share of a dispatch with an effect store).
    let mut b = *b"0000-00-00T00:00:00.000Z";
    let mut put = |at: usize, width: usize, mut v: i64| {
        for i in (at..at + width).rev() {
            b[i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    };
    put(0, 4, y);
    put(5, 2, m);
    put(8, 2, d);
    put(11, 2, rem / 3_600_000);
    put(14, 2, rem / 60_000 % 60);
    put(17, 2, rem / 1000 % 60);
    put(20, 3, rem % 1000);
    b.iter().map(|&c| c as char).collect()
}

fn digits(s: &[u8]) -> Option<i64> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut n = 0i64;
    for b in s {
        n = n * 10 + (b - b'0') as i64;
    }
    Some(n)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

/// Parses the common, unambiguous ISO-8601 forms exactly as `Date.parse` does:
/// `YYYY-MM-DD` (UTC) and `YYYY-MM-DDTHH:mm:ss[.sss](Z|±HH:mm)`. Any other text returns `None`; callers
/// that need `Date.parse`'s full grammar (local times, other layouts) ask the host for those.
pub fn parse_iso_strict(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let y = digits(&b[0..4])?;
    let mo = digits(&b[5..7])?;
    let d = digits(&b[8..10])?;
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) {
        return None;
    }
    let day_ms = days_from_civil(y, mo, d) * 86_400_000;
    if b.len() == 10 {
        return Some(day_ms);
    }
    if b.len() < 20 || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let h = digits(&b[11..13])?;
    let mi = digits(&b[14..16])?;
    let sec = digits(&b[17..19])?;
    if h > 23 || mi > 59 || sec > 59 {
        return None;
    }
    let mut i = 19;
    let mut ms = 0;
    if b[i] == b'.' {
        if b.len() < i + 4 {
            return None;
        }
        ms = digits(&b[i + 1..i + 4])?;
        i += 4;
    }
    let offset_min = match &b[i..] {
        [b'Z'] => 0,
        [sign @ (b'+' | b'-'), oh1, oh2, b':', om1, om2] => {
            let oh = digits(&[*oh1, *oh2])?;
            let om = digits(&[*om1, *om2])?;
            if oh > 23 || om > 59 {
                return None;
            }
            let v = oh * 60 + om;
            if *sign == b'+' {
                v
            } else {
                -v
            }
        }
        _ => return None,
    };
    Some(day_ms + h * 3_600_000 + mi * 60_000 + sec * 1000 + ms - offset_min * 60_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses_iso_timestamps() {
        assert_eq!(format_iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_iso(1_767_225_600_123), "2026-01-01T00:00:00.123Z");
        assert_eq!(
            parse_iso_strict("2026-01-01T00:00:00.123Z"),
            Some(1_767_225_600_123)
        );
        assert_eq!(parse_iso_strict("2026-01-01"), Some(1_767_225_600_000));
        assert_eq!(
            parse_iso_strict("2026-01-01T00:00:00+01:00"),
            Some(1_767_222_000_000)
        );
        assert_eq!(
            parse_iso_strict("2024-02-29T12:00:00Z"),
            Some(1_709_208_000_000)
        );
        for odd in [
            "2026-02-30",
            "2026-01-01T00:00:00",
            "2026-01-01T24:00:00Z",
            "nope",
            "2026-01-01T00:00:00.1Z",
        ] {
            assert_eq!(parse_iso_strict(odd), None, "{odd}");
        }
        let now = now_ms();
        assert_eq!(parse_iso_strict(&format_iso(now)), Some(now));
    }

    #[test]
    fn hand_written_digits_match_the_general_formatter() {
        let general = |ms: i64| {
            let rem = ms.rem_euclid(86_400_000);
            let (y, m, d) = civil_from_days(ms.div_euclid(86_400_000));
            format!(
                "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
                y,
                m,
                d,
                rem / 3_600_000,
                rem / 60_000 % 60,
                rem / 1000 % 60,
                rem % 1000
            )
        };
        // Every month boundary and leap day from 1600 to 2500, odd milliseconds, the year edges.
        let mut ms = -11_676_096_000_000i64; // 1600-01-01
        while ms < 16_725_225_600_000 {
            for t in [ms, ms + 86_399_999, ms + 45_296_789] {
                assert_eq!(format_iso(t), general(t), "{t}");
            }
            ms += 86_400_000 * 29 + 7_777;
        }
        for t in [
            -62_167_219_200_000, // 0000-01-01
            253_402_300_799_999, // 9999-12-31T23:59:59.999Z
            253_402_300_800_000, // 10000-01-01
            -62_167_219_200_001, // before year 0
        ] {
            assert_eq!(format_iso(t), general(t), "{t}");
        }
    }
}
