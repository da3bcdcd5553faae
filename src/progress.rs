//! Progress of long foreground work (`build-local`, `verify`, `dbprobe --check`, `addq
//! plan`): a bar (indicatif) when stderr is a terminal, plain lines every few seconds when
//! it is not (a log file, a pipe, CI), so logs stay readable and terminals stay calm.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Where progress goes.
pub struct Progress<'a> {
    kind: Kind<'a>,
    /// Least time between two updates.
    every: Duration,
    last: Option<Instant>,
}

enum Kind<'a> {
    Bar(ProgressBar),
    Stderr,
    Lines(&'a mut dyn Write),
}

/// How often a bar is redrawn.
const BAR_EVERY: Duration = Duration::from_millis(200);

impl<'a> Progress<'a> {
    /// Plain lines into `out`, at most one progress line per `every`.
    pub fn lines(out: &'a mut dyn Write, every: Duration) -> Progress<'a> {
        Progress {
            kind: Kind::Lines(out),
            every,
            last: Some(Instant::now()),
        }
    }

    /// On stderr: a bar when it is a terminal (`NOWDB_PROGRESS=lines` asks for lines
    /// anyway), else a line per `every`.
    pub fn stderr(every: Duration) -> Progress<'static> {
        let lines = std::env::var("NOWDB_PROGRESS").is_ok_and(|v| v == "lines");
        if std::io::stderr().is_terminal() && !lines {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("[{bar:30.cyan/blue}] {percent:>3}% {wide_msg}")
                    .expect("a valid template")
                    .progress_chars("=> "),
            );
            return Progress {
                kind: Kind::Bar(bar),
                every: BAR_EVERY,
                last: None,
            };
        }
        Progress {
            kind: Kind::Stderr,
            every,
            last: Some(Instant::now()),
        }
    }

    /// A line that stays: a start or summary line, a warning (printed above a bar).
    pub fn line(&mut self, text: &str) {
        match &mut self.kind {
            Kind::Bar(bar) => bar.println(text),
            Kind::Stderr => crate::cli::stderr_line(text),
            Kind::Lines(out) => {
                let _ = writeln!(out, "{text}");
            }
        }
    }

    /// Whether an update is due (a bar's at once, a line's after `every`); callers gather
    /// their figures only then.
    pub fn due(&mut self) -> bool {
        let due = self.last.is_none_or(|t| t.elapsed() >= self.every);
        if due {
            self.last = Some(Instant::now());
        }
        due
    }

    /// Where the work stands: `done` of `total`, and the same said as a line.
    pub fn update(&mut self, done: u64, total: u64, text: &str) {
        match &mut self.kind {
            Kind::Bar(bar) => {
                bar.set_length(total.max(1));
                bar.set_position(done.min(total));
                bar.set_message(text.to_string());
            }
            _ => self.line(text),
        }
    }

    /// Ends a bar, leaving the terminal to the lines after it.
    pub fn finish(&mut self) {
        if let Kind::Bar(bar) = &self.kind {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress<'_> {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_throttled_and_kept_lines_are_not() {
        let (mut out, mut out2) = (Vec::new(), Vec::new());
        {
            let mut p = Progress::lines(&mut out, Duration::from_secs(3600));
            for k in 0..3 {
                if p.due() {
                    p.update(k, 10, &format!("at {k}"));
                }
            }
            p.line("kept");
            let mut p = Progress::lines(&mut out2, Duration::ZERO);
            p.due().then(|| p.update(1, 10, "at 1"));
        }
        assert_eq!(String::from_utf8(out).unwrap(), "kept\n");
        assert_eq!(String::from_utf8(out2).unwrap(), "at 1\n");
    }
}
