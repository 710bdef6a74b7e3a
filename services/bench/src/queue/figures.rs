//! What the queue part measures; `crate::report::queue` prints it.

use std::fmt;
use std::time::Duration;

/// Why a figure has no rate.
#[derive(Clone, Debug, PartialEq)]
pub enum NotMeasured {
    /// It could not start at all (no Python, no virtual environment): no round ran it.
    CouldNotRun(String),
    /// It stalled or failed in this round (1-based) and ran in no later round, so its drains
    /// so far are not reported either: a rate over fewer rounds would not compare.
    Failed { round: u32, why: String },
}

impl fmt::Display for NotMeasured {
    /// Only the first line of why: the whole story (a consumer's output) is on stderr.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let first_line = |why: &str| {
            why.lines()
                .next()
                .unwrap_or_default()
                .trim_end_matches(':')
                .to_owned()
        };
        match self {
            NotMeasured::CouldNotRun(why) => write!(f, "could not run: {}", first_line(why)),
            NotMeasured::Failed { round, why } => {
                write!(f, "failed in round {round}: {}", first_line(why))
            }
        }
    }
}

/// The `maxConcurrency` of figure (d): more than the worker ever has in flight (at most 32 +
/// 32), so the cap never binds and only its bookkeeping is measured.
pub const CAPPED: u32 = 64;

/// Messages per second over all rounds, or why there is none.
pub type Rate = Result<f64, NotMeasured>;

/// The Storage Queue dispatch figures.
pub struct QueueFigures {
    /// Shoal's invocations in flight (batchSize + newBatchThreshold) = the Python threads.
    pub concurrency: usize,
    /// (a) Shoal's end-to-end dispatch rate.
    pub shoal: Rate,
    /// (b) The SDK's tight receive-and-delete loop.
    pub ceiling: Rate,
    /// (c) The Python consumer's rate.
    pub python: Rate,
    /// (d) Shoal again, its function capped by `maxConcurrency` [`CAPPED`] — above what it has
    /// in flight, so the figure is the cap's own cost against (a).
    pub capped: Rate,
    /// None when Shoal's figure was not measured.
    pub worker_cpu_per_message: Option<Duration>,
    pub python_cpu_per_message: Option<Duration>,
    /// Azurite's load during each measured figure; empty when its process was not found.
    pub azurite: Vec<AzuriteLoad>,
}

impl QueueFigures {
    /// Why the part failed: only when Shoal's own figure was not measured. A failed reference
    /// is named in its line and fails nothing.
    pub fn failure(&self) -> Option<String> {
        let not_measured = self.shoal.as_ref().err()?;
        Some(format!(
            "Shoal's queue dispatch {not_measured} (see the lines above)"
        ))
    }
}

pub struct AzuriteLoad {
    pub figure: &'static str,
    pub cpu_per_message: Duration,
    /// Its CPU time over the drain's wall time: 1.0 is one core busy all along.
    pub busy: f64,
}
