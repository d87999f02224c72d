//! One batched append writer: `append` queues a row and returns; a writer thread commits the queue in
//! batches (rows in append order, at most `batch_size` per commit) when `batch_size` rows are queued,
//! `flush_interval` after the first queued row, or when `flush` / `close` asks.
//!
//! A row leaves the queue only once its batch is committed: a failed batch goes back to the front, the
//! failure is kept (until the next commit) for `append` and `flush` to report, and the writer retries after
//! a pause. So at most `max_pending` rows wait (queued or being written); past that `append` waits for the
//! writer ([`WhenFull::Wait`]) or refuses ([`WhenFull::Refuse`]). `close` commits what it can: the writer
//! stops once the queue is empty, or after [`CLOSE_TRIES`] failed commits in a row while closing.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Where committed rows go: a SQLite connection, a PostgreSQL client.
pub trait Sink<T>: Send + 'static {
    /// Commits `rows` in order, all or none. `first` is the place of `rows[0]` among every row this
    /// writer committed (0 for its first row): a retried batch starts at the same place, so a sink whose
    /// commit answer can be lost (a network database) keys rows by it and stores a retried row once.
    /// `Err`: why, in the component's words.
    fn write(&mut self, first: u64, rows: &[T]) -> Result<(), String>;
}

/// What `append` does when `max_pending` rows wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenFull {
    /// Wait for the writer to commit (a local file: the wait is short).
    Wait,
    /// Refuse at once (a database that may be unreachable for long).
    Refuse,
}

#[derive(Debug, Clone)]
pub struct BatchOptions {
    /// Most rows per commit.
    pub batch_size: usize,
    /// Longest a queued row waits before its batch is committed.
    pub flush_interval: Duration,
    /// Most rows waiting (queued or being written).
    pub max_pending: usize,
    pub when_full: WhenFull,
    /// Pause after a failed commit; it doubles with each failure in a row, up to `retry_max`.
    pub retry_first: Duration,
    pub retry_max: Duration,
}

/// Failed commits in a row after which a closing writer gives up on what is left.
pub const CLOSE_TRIES: u32 = 3;

/// An `append`, `flush` or `close` that did not succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchError {
    /// Closing or closed.
    Closed,
    /// [`WhenFull::Refuse`]: `max_pending` rows wait; the last commit failure, if any.
    Full {
        max_pending: usize,
        cause: Option<String>,
    },
    /// The last commit failure, reported as soon as it happens.
    Failed(String),
    /// `flush_within`: rows appended before the call and not committed when the time was up or the
    /// writer stopped; the last commit failure, if any.
    NotWritten { rows: u64, cause: Option<String> },
}

/// Rows accepted by `append`, rows committed, rows waiting (queued or being written).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchStatus {
    pub accepted: u64,
    pub committed: u64,
    pub pending: u64,
}

struct State<T> {
    queue: VecDeque<T>,
    /// Rows taken by the writer and not yet committed.
    in_flight: usize,
    accepted: u64,
    committed: u64,
    flush_wanted: bool,
    closing: bool,
    /// `close` gave up on the rows left: a failed batch is not put back.
    abandoned: bool,
    stopped: bool,
    /// The last commit failure, cleared by the next commit.
    error: Option<String>,
}

impl<T> State<T> {
    fn pending(&self) -> usize {
        self.queue.len() + self.in_flight
    }
    fn status(&self) -> BatchStatus {
        BatchStatus {
            accepted: self.accepted,
            committed: self.committed,
            pending: self.pending() as u64,
        }
    }
}

struct Shared<T> {
    state: Mutex<State<T>>,
    wake_writer: Condvar,
    progress: Condvar,
    options: BatchOptions,
}

impl<T> Shared<T> {
    fn state(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn wait<'a>(&self, st: MutexGuard<'a, State<T>>) -> MutexGuard<'a, State<T>> {
        self.progress.wait(st).unwrap_or_else(|e| e.into_inner())
    }
}

/// The queue and its writer thread.
pub struct BatchWriter<T> {
    shared: Arc<Shared<T>>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

impl<T: Send + 'static> BatchWriter<T> {
    /// Starts the writer thread (named `name`) over `sink`.
    pub fn start<S: Sink<T>>(name: &str, options: BatchOptions, sink: S) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                in_flight: 0,
                accepted: 0,
                committed: 0,
                flush_wanted: false,
                closing: false,
                abandoned: false,
                stopped: false,
                error: None,
            }),
            wake_writer: Condvar::new(),
            progress: Condvar::new(),
            options,
        });
        let for_writer = shared.clone();
        let writer = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || writer_loop(&for_writer, sink))?;
        Ok(Self {
            shared,
            writer: Mutex::new(Some(writer)),
        })
    }

    /// Queues one row.
    pub fn append(&self, row: T) -> Result<(), BatchError> {
        let shared = &*self.shared;
        let o = &shared.options;
        let mut st = shared.state();
        loop {
            if st.closing {
                return Err(BatchError::Closed);
            }
            if st.pending() < o.max_pending {
                break;
            }
            match o.when_full {
                WhenFull::Refuse => {
                    return Err(BatchError::Full {
                        max_pending: o.max_pending,
                        cause: st.error.clone(),
                    })
                }
                WhenFull::Wait => {
                    if let Some(e) = &st.error {
                        return Err(BatchError::Failed(e.clone()));
                    }
                    shared.wake_writer.notify_one();
                    st = shared.wait(st);
                }
            }
        }
        st.queue.push_back(row);
        st.accepted += 1;
        let n = st.queue.len();
        if n == 1 || n >= o.batch_size {
            shared.wake_writer.notify_one();
        }
        Ok(())
    }

    pub fn status(&self) -> BatchStatus {
        self.shared.state().status()
    }

    /// Waits until every row appended before the call is committed; fails with the first commit failure
    /// meanwhile, or `Closed` when closing.
    pub fn flush(&self) -> Result<(), BatchError> {
        let shared = &*self.shared;
        let mut st = shared.state();
        let target = st.accepted;
        if st.committed >= target {
            return Ok(());
        }
        if st.closing {
            return Err(BatchError::Closed);
        }
        st.flush_wanted = true;
        shared.wake_writer.notify_one();
        while st.committed < target {
            st = shared.wait(st);
            if st.committed < target {
                if let Some(e) = &st.error {
                    return Err(BatchError::Failed(e.clone()));
                }
                if st.stopped {
                    return Err(BatchError::Closed);
                }
            }
        }
        Ok(())
    }

    /// Waits until every row appended before the call is committed, through commit failures, for at most
    /// `timeout`.
    pub fn flush_within(&self, timeout: Duration) -> Result<BatchStatus, BatchError> {
        let shared = &*self.shared;
        let deadline = Instant::now() + timeout;
        let mut st = shared.state();
        let target = st.accepted;
        st.flush_wanted = true;
        shared.wake_writer.notify_one();
        while st.committed < target {
            let now = Instant::now();
            if now >= deadline || st.stopped {
                return Err(BatchError::NotWritten {
                    rows: target - st.committed,
                    cause: st.error.clone(),
                });
            }
            st = shared
                .progress
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        Ok(st.status())
    }

    /// Stops taking rows, lets the writer commit what it can (all of the queue, unless `abandon` drops
    /// it first) and waits for it to stop. The rows left and the last failure, when any are left.
    /// Later calls return `Ok`.
    pub fn close(&self, abandon: bool) -> Result<(), (usize, String)> {
        let handle = self.writer.lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some(handle) = handle else { return Ok(()) };
        {
            let mut st = self.shared.state();
            st.closing = true;
            if abandon {
                st.abandoned = true;
                st.queue.clear();
            }
            self.shared.wake_writer.notify_all();
            self.shared.progress.notify_all();
        }
        let _ = handle.join();
        let st = self.shared.state();
        match st.pending() {
            0 => Ok(()),
            left => Err((left, st.error.clone().unwrap_or_default())),
        }
    }
}

impl<T> Drop for BatchWriter<T> {
    fn drop(&mut self) {
        // The owner closes first; this only makes sure the thread does not outlive the queue's users.
        let handle = self.writer.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(handle) = handle {
            {
                let mut st = self.shared.state();
                st.closing = true;
                self.shared.wake_writer.notify_all();
            }
            let _ = handle.join();
        }
    }
}

fn writer_loop<T, S: Sink<T>>(shared: &Shared<T>, mut sink: S) {
    let o = &shared.options;
    let mut failures = 0u32;
    loop {
        let (first, batch): (u64, Vec<T>) = {
            let mut st = shared.state();
            loop {
                let n = st.queue.len();
                // After a failure the pause was taken already: retry at once.
                if n >= o.batch_size || (n > 0 && (st.flush_wanted || st.closing || failures > 0)) {
                    break;
                }
                if n == 0 {
                    st.flush_wanted = false;
                    if st.closing {
                        st.stopped = true;
                        shared.progress.notify_all();
                        return;
                    }
                    st = shared
                        .wake_writer
                        .wait(st)
                        .unwrap_or_else(|e| e.into_inner());
                } else {
                    let (g, t) = shared
                        .wake_writer
                        .wait_timeout(st, o.flush_interval)
                        .unwrap_or_else(|e| e.into_inner());
                    st = g;
                    if t.timed_out() && !st.queue.is_empty() {
                        break;
                    }
                }
            }
            let n = st.queue.len().min(o.batch_size);
            st.in_flight = n;
            // A failed batch went back to the front of the queue: the front is always the row after
            // the last committed one.
            (st.committed, st.queue.drain(..n).collect())
        };
        let outcome = sink.write(first, &batch);
        let mut st = shared.state();
        st.in_flight = 0;
        match outcome {
            Ok(()) => {
                failures = 0;
                st.committed += batch.len() as u64;
                st.error = None;
                shared.progress.notify_all();
            }
            Err(e) => {
                failures += 1;
                if !st.abandoned {
                    for row in batch.into_iter().rev() {
                        st.queue.push_front(row);
                    }
                }
                st.error = Some(e);
                if st.closing && failures >= CLOSE_TRIES {
                    st.stopped = true;
                    shared.progress.notify_all();
                    return;
                }
                shared.progress.notify_all();
                drop(st);
                let pause = o
                    .retry_first
                    .saturating_mul(1 << (failures - 1).min(16))
                    .min(o.retry_max.max(o.retry_first));
                std::thread::sleep(pause);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc;

    /// Commits into a vector; fails while `failing` is set; waits for `gate` before each commit when
    /// given one (and says so on `writing`).
    struct TestSink {
        rows: Arc<Mutex<Vec<u32>>>,
        batches: Arc<Mutex<Vec<usize>>>,
        failing: Arc<AtomicBool>,
        gate: Option<(mpsc::Sender<()>, mpsc::Receiver<()>)>,
    }

    impl Sink<u32> for TestSink {
        fn write(&mut self, first: u64, rows: &[u32]) -> Result<(), String> {
            // Every row's place is its value here (rows are appended as 0, 1, 2, …).
            assert_eq!(Some(first), rows.first().map(|r| u64::from(*r)));
            if let Some((writing, open)) = &self.gate {
                let _ = writing.send(());
                let _ = open.recv();
            }
            if self.failing.load(Ordering::SeqCst) {
                return Err("disk on fire".into());
            }
            self.rows.lock().unwrap().extend_from_slice(rows);
            self.batches.lock().unwrap().push(rows.len());
            Ok(())
        }
    }

    struct Probe {
        rows: Arc<Mutex<Vec<u32>>>,
        batches: Arc<Mutex<Vec<usize>>>,
        failing: Arc<AtomicBool>,
    }

    fn options(batch_size: usize, max_pending: usize, when_full: WhenFull) -> BatchOptions {
        BatchOptions {
            batch_size,
            flush_interval: Duration::from_millis(5),
            max_pending,
            when_full,
            retry_first: Duration::from_millis(1),
            retry_max: Duration::from_millis(4),
        }
    }

    fn start(
        o: BatchOptions,
        gate: Option<(mpsc::Sender<()>, mpsc::Receiver<()>)>,
    ) -> (BatchWriter<u32>, Probe) {
        let probe = Probe {
            rows: Arc::default(),
            batches: Arc::default(),
            failing: Arc::default(),
        };
        let sink = TestSink {
            rows: probe.rows.clone(),
            batches: probe.batches.clone(),
            failing: probe.failing.clone(),
            gate,
        };
        (BatchWriter::start("test-writer", o, sink).unwrap(), probe)
    }

    /// A writer of one row per batch, at most two waiting, whose sink holds each batch at a gate
    /// until `open` lets it through; row 0 is appended and held, row 1 queued.
    struct Gated {
        w: Arc<BatchWriter<u32>>,
        probe: Probe,
        writing: mpsc::Receiver<()>,
        open: mpsc::Sender<()>,
    }

    fn gated(when_full: WhenFull) -> Gated {
        let (writing_tx, writing) = mpsc::channel();
        let (open, open_rx) = mpsc::channel();
        let (w, probe) = start(options(1, 2, when_full), Some((writing_tx, open_rx)));
        w.append(0).unwrap();
        writing.recv().unwrap(); // row 0 is being written
        w.append(1).unwrap();
        assert_eq!(w.status().pending, 2);
        Gated {
            w: Arc::new(w),
            probe,
            writing,
            open,
        }
    }

    /// A writer whose sink fails, with rows `0..rows` appended.
    fn failing(o: BatchOptions, rows: u32) -> (BatchWriter<u32>, Probe) {
        let (w, probe) = start(o, None);
        probe.failing.store(true, Ordering::SeqCst);
        for i in 0..rows {
            w.append(i).unwrap();
        }
        (w, probe)
    }

    #[test]
    fn rows_are_committed_in_append_order_in_bounded_batches() {
        for when_full in [WhenFull::Wait, WhenFull::Refuse] {
            let (w, probe) = start(options(7, 10_000, when_full), None);
            for i in 0..1_000 {
                w.append(i).unwrap();
            }
            w.flush().unwrap();
            assert_eq!(*probe.rows.lock().unwrap(), (0..1_000).collect::<Vec<_>>());
            assert!(probe.batches.lock().unwrap().iter().all(|n| *n <= 7));
            assert_eq!(
                w.status(),
                BatchStatus {
                    accepted: 1_000,
                    committed: 1_000,
                    pending: 0
                }
            );
            w.close(false).unwrap();
        }
    }

    #[test]
    fn close_commits_every_queued_row_and_later_appends_are_refused() {
        // A long interval and a large batch: only `close` makes the writer commit.
        let mut o = options(100_000, 100_000, WhenFull::Wait);
        o.flush_interval = Duration::from_secs(3600);
        let (w, probe) = start(o, None);
        for i in 0..5_000 {
            w.append(i).unwrap();
        }
        w.close(false).unwrap();
        assert_eq!(*probe.rows.lock().unwrap(), (0..5_000).collect::<Vec<_>>());
        assert_eq!(w.append(1), Err(BatchError::Closed));
        assert_eq!(w.status().committed, 5_000);
        w.close(false).unwrap();
    }

    #[test]
    fn a_failing_sink_keeps_the_rows_queued_and_reports_its_error() {
        let (w, probe) = failing(options(2, 100, WhenFull::Wait), 5);
        assert_eq!(w.flush(), Err(BatchError::Failed("disk on fire".into())));
        assert_eq!(
            w.flush_within(Duration::from_millis(20)),
            Err(BatchError::NotWritten {
                rows: 5,
                cause: Some("disk on fire".into())
            })
        );
        assert_eq!(w.status().pending, 5);
        assert_eq!(w.status().committed, 0);
        assert!(probe.rows.lock().unwrap().is_empty());
        probe.failing.store(false, Ordering::SeqCst);
        w.flush_within(Duration::from_secs(60)).unwrap();
        assert_eq!(*probe.rows.lock().unwrap(), vec![0, 1, 2, 3, 4]);
        w.close(false).unwrap();
    }

    #[test]
    fn a_close_that_cannot_commit_gives_up_and_says_what_is_left() {
        let (w, _) = failing(options(2, 100, WhenFull::Refuse), 3);
        assert_eq!(w.close(false), Err((3, "disk on fire".into())));
        assert_eq!(w.flush(), Err(BatchError::Closed));

        let (w, _) = failing(options(2, 100, WhenFull::Refuse), 3);
        w.close(true).unwrap();
        assert!(matches!(
            w.flush_within(Duration::from_secs(60)),
            Err(BatchError::NotWritten { rows: 3, .. })
        ));
    }

    #[test]
    fn when_full_refuse_refuses_at_once_with_the_last_failure() {
        let (w, probe) = failing(options(2, 3, WhenFull::Refuse), 3);
        // Wait for the first failed commit, so the refusal carries its cause.
        assert!(w.flush().is_err());
        assert_eq!(
            w.append(3),
            Err(BatchError::Full {
                max_pending: 3,
                cause: Some("disk on fire".into())
            })
        );
        probe.failing.store(false, Ordering::SeqCst);
        w.flush_within(Duration::from_secs(60)).unwrap();
        w.append(3).unwrap();
        w.close(false).unwrap();
        assert_eq!(*probe.rows.lock().unwrap(), vec![0, 1, 2, 3]);
    }

    #[test]
    fn rows_being_written_count_as_pending() {
        // Refuse: with one row being written and one queued, a third is refused although the queue
        // itself holds only one.
        let g = gated(WhenFull::Refuse);
        assert_eq!(
            g.w.append(2),
            Err(BatchError::Full {
                max_pending: 2,
                cause: None
            })
        );
        g.open.send(()).unwrap();
        g.writing.recv().unwrap(); // row 1 is being written: row 0 is committed
        g.open.send(()).unwrap();
        g.w.flush().unwrap();
        g.w.close(false).unwrap();
        assert_eq!(*g.probe.rows.lock().unwrap(), vec![0, 1]);
    }

    #[test]
    fn when_full_wait_waits_for_a_commit_then_queues() {
        let g = gated(WhenFull::Wait);
        let (returned_tx, returned) = mpsc::channel();
        let appender = {
            let w = g.w.clone();
            std::thread::spawn(move || returned_tx.send(w.append(2)).unwrap())
        };
        // Nothing can be committed while the gate is shut, so the third append must still be waiting.
        assert!(returned.recv_timeout(Duration::from_millis(100)).is_err());
        assert_eq!(g.w.status().accepted, 2);
        // Open the gate for every batch from now on.
        for _ in 0..3 {
            g.open.send(()).unwrap();
        }
        assert_eq!(returned.recv().unwrap(), Ok(()));
        appender.join().unwrap();
        g.w.close(false).unwrap();
        assert_eq!(*g.probe.rows.lock().unwrap(), vec![0, 1, 2]);
    }
}
