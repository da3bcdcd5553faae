//! Wall-clock time as the site's records and logs write it: seconds since the epoch in the
//! records, local time with its offset for people, RFC 3339 in JSON (through `jiff`).

/// Seconds since the epoch, now.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn instant(secs: u64) -> jiff::Timestamp {
    jiff::Timestamp::from_second(secs.min(i64::MAX as u64) as i64).unwrap_or(jiff::Timestamp::MAX)
}

/// `YYYY-MM-DD HH:MM:SS+HH:MM`: local time (the machine's time zone) with its UTC offset, as
/// log lines and reports for people print it. The date and the time stay two words, so a
/// log line still splits into date, time, speaker and message.
pub fn local_time(secs: u64) -> String {
    let zoned = instant(secs).to_zoned_datetime(jiff::tz::TimeZone::system());
    zoned.strftime("%Y-%m-%d %H:%M:%S%:z").to_string()
}

/// RFC 3339 in UTC (`2026-11-23T01:01:01Z`), as JSON outputs carry times.
pub fn rfc3339(secs: u64) -> String {
    instant(secs).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339_in_json_and_local_with_offset_in_logs() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_795_392_000 + 3661), "2026-11-23T01:01:01Z");
        let local = local_time(1_795_392_000 + 3661);
        let (date, time) = local.split_once(' ').unwrap();
        assert_eq!(date.len(), 10, "{local}");
        assert!(
            time.len() == 14 && time[8..].starts_with(['+', '-']),
            "{local}"
        );
        // The same instant: the offset undoes the local shift.
        let back = jiff::Timestamp::strptime("%Y-%m-%d %H:%M:%S%:z", &local).unwrap();
        assert_eq!(back.as_second(), 1_795_392_000 + 3661);
    }
}
