//! A progress line on stderr for long first runs (building a cache over
//! many files). Shown only on a terminal; silent when piped, so scripts and
//! agents never see it.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Counts work done; a background thread redraws the line until dropped.
pub struct Progress {
    done: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    painter: Option<JoinHandle<()>>,
}

impl Progress {
    /// A progress line for `total` steps, drawn only when stderr is a
    /// terminal and the job is big enough to be worth one.
    pub fn start(label: &'static str, total: usize) -> Progress {
        Progress::start_from(label, total, 2_000)
    }

    /// [`Progress::start`] for slow steps: drawn from `min` steps on.
    pub fn start_from(label: &'static str, total: usize, min: usize) -> Progress {
        let done = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let show = total >= min && std::io::stderr().is_terminal();
        let painter = show.then(|| {
            let (done, stop) = (Arc::clone(&done), Arc::clone(&stop));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let n = done.load(Ordering::Relaxed).min(total);
                    let width = 30;
                    let filled = n * width / total.max(1);
                    eprint!(
                        "\r{label} [{}{}] {n}/{total}",
                        "#".repeat(filled),
                        " ".repeat(width - filled)
                    );
                    let _ = std::io::stderr().flush();
                    std::thread::sleep(Duration::from_millis(120));
                }
                eprint!("\r\x1b[2K");
                let _ = std::io::stderr().flush();
            })
        });
        Progress { done, stop, painter }
    }

    /// The counter to advance as work completes.
    pub fn counter(&self) -> &AtomicUsize {
        &self.done
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(p) = self.painter.take() {
            let _ = p.join();
        }
    }
}
