//! The progress line `chunkwise read` draws on stderr when stderr is a terminal (nothing
//! otherwise, so pipes and tests see none): chunks done, bytes received, rate and the time
//! left, estimated from the share of chunks done.
//!
//! ```text
//! [##########          ] 12/24 chunks  1.5 MiB  3.0 MiB/s  ETA 1s
//! ```

use std::io::Write;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Width of the bar in characters.
const BAR: usize = 20;

/// Least time between two redraws.
const REDRAW: Duration = Duration::from_millis(100);

/// The progress line for `done` of `total` chunks after `bytes` body bytes in `elapsed`:
/// the bar, the counts, bytes in binary units, the rate (bytes per second, once any time
/// has passed) and the time left (`elapsed` times chunks left over chunks done, once a
/// chunk is done).
pub fn progress_line(done: u64, total: u64, bytes: u64, elapsed: Duration) -> String {
    let filled = if total == 0 {
        BAR
    } else {
        ((done.min(total) as u128 * BAR as u128) / total as u128) as usize
    };
    let mut line = format!(
        "[{}{}] {done}/{total} chunks  {}",
        "#".repeat(filled),
        " ".repeat(BAR - filled),
        human_bytes(bytes as f64)
    );
    let secs = elapsed.as_secs_f64();
    if secs > 0.0 {
        line.push_str(&format!("  {}/s", human_bytes(bytes as f64 / secs)));
    }
    if done > 0 && done < total {
        let left = secs * (total - done) as f64 / done as f64;
        line.push_str(&format!("  ETA {}", human_duration(left)));
    }
    line
}

/// `512 B`, `1.5 KiB`, `3.0 MiB`, `1.2 GiB`.
pub fn human_bytes(b: f64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if b < 1024.0 {
        return format!("{} B", b.round() as u64);
    }
    let mut v = b / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

/// `7s`, `2m05s`, `1h02m`.
pub fn human_duration(secs: f64) -> String {
    let s = secs.round().max(0.0) as u64;
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    }
}

/// Draws [`progress_line`] on stderr, at most every 100 ms and always at the end, and
/// clears it when dropped. Draws nothing when `enabled` is false (stderr not a terminal).
pub struct ProgressBar {
    enabled: bool,
    start: Instant,
    state: Mutex<State>,
}

/// The last drawing and the chunk counts it showed.
#[derive(Default)]
struct State {
    drawn: Option<Instant>,
    done: u64,
    total: u64,
}

impl ProgressBar {
    /// A bar started now.
    pub fn new(enabled: bool) -> ProgressBar {
        ProgressBar {
            enabled,
            start: Instant::now(),
            state: Mutex::new(State::default()),
        }
    }

    /// Redraws for `done` of `total` chunks and `bytes` received (skipped when the last
    /// draw was under 100 ms ago, unless the read is done).
    pub fn update(&self, done: u64, total: u64, bytes: u64) {
        if !self.enabled {
            return;
        }
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        (state.done, state.total) = (done, total);
        self.draw(&mut state, bytes, done >= total);
    }

    /// Redraws with `bytes` received and the chunk counts of the last [`ProgressBar::update`]
    /// (nothing before the first: the read has not planned its chunks yet).
    pub fn tick(&self, bytes: u64) {
        if !self.enabled {
            return;
        }
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.total > 0 {
            self.draw(&mut state, bytes, false);
        }
    }

    fn draw(&self, state: &mut State, bytes: u64, force: bool) {
        let now = Instant::now();
        if !force && state.drawn.is_some_and(|t| now.duration_since(t) < REDRAW) {
            return;
        }
        state.drawn = Some(now);
        let line = progress_line(
            state.done,
            state.total,
            bytes,
            now.duration_since(self.start),
        );
        let mut err = std::io::stderr().lock();
        // A failed write to a terminal only loses the bar.
        let _ = write!(err, "\r{line}\x1b[K");
        let _ = err.flush();
    }
}

impl Drop for ProgressBar {
    fn drop(&mut self) {
        let drawn = self
            .state
            .get_mut()
            .map(|s| s.drawn.is_some())
            .unwrap_or(false);
        if self.enabled && drawn {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_counts_bytes_rate_and_time_left() {
        assert_eq!(
            progress_line(12, 24, 3 << 19, Duration::from_millis(500)),
            "[##########          ] 12/24 chunks  1.5 MiB  3.0 MiB/s  ETA 1s"
        );
        assert_eq!(
            progress_line(0, 4, 100, Duration::ZERO),
            "[                    ] 0/4 chunks  100 B"
        );
        assert_eq!(
            progress_line(4, 4, 2048, Duration::from_secs(2)),
            "[####################] 4/4 chunks  2.0 KiB  1.0 KiB/s"
        );
        assert_eq!(
            progress_line(1, 100, 1 << 30, Duration::from_secs(5)),
            "[                    ] 1/100 chunks  1.0 GiB  204.8 MiB/s  ETA 8m15s"
        );
        assert_eq!(human_duration(3725.0), "1h02m");
    }
}
