//! Freeing large values off the path of a stop: a solver cut by the clock
//! or a signal must return promptly (the target is in
//! `docs/benchmarks.md`), and freeing the structures of millions of
//! buffers (boxing's nested boxes, its jobs, the placer's index) would
//! take a large share of that wait.

use std::sync::mpsc::{self, Sender};
use std::sync::{Mutex, OnceLock, PoisonError};

/// From this many elements on, [`drop_later`] hands a value to the
/// disposal thread.
pub const DROP_LATER_MIN: usize = 1 << 16;

/// A value to drop, of any type.
type Garbage = Box<dyn Send>;

/// The sending end of the disposal thread's queue (`None` if the thread
/// could not be started), made on first use. The thread drops what it
/// receives, one value after the other, and lives as long as the process.
static QUEUE: OnceLock<Option<Mutex<Sender<Garbage>>>> = OnceLock::new();

/// The disposal thread's queue, started on first use.
fn queue() -> Option<&'static Mutex<Sender<Garbage>>> {
    QUEUE
        .get_or_init(|| {
            let (send, receive) = mpsc::channel::<Garbage>();
            std::thread::Builder::new()
                .name("memplan-drop".into())
                .spawn(move || {
                    for garbage in receive {
                        drop(garbage);
                    }
                })
                .ok()
                .map(|_| Mutex::new(send))
        })
        .as_ref()
}

/// Drops `value` (of about `len` elements) on the disposal thread when it
/// is large, so that the caller goes on at once; here when it is small or
/// the thread could not be started.
pub fn drop_later<T: Send + 'static>(value: T, len: usize) {
    if len < DROP_LATER_MIN {
        return;
    }
    let Some(queue) = queue() else {
        return;
    };
    let garbage: Garbage = Box::new(value);
    // A closed queue hands the value back in the error, dropped here.
    let _ = queue
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .send(garbage);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends its thread's name on its channel when dropped.
    struct Signal(mpsc::Sender<Option<String>>);
    impl Drop for Signal {
        fn drop(&mut self) {
            let name = std::thread::current().name().map(str::to_owned);
            let _ = self.0.send(name);
        }
    }

    #[test]
    fn small_values_drop_here_large_ones_on_the_disposal_thread() {
        let (send, receive) = mpsc::channel();
        let here = std::thread::current().name().map(str::to_owned);
        drop_later(Signal(send.clone()), 1);
        assert_eq!(receive.try_recv(), Ok(here), "a small value drops at once");
        for _ in 0..3 {
            drop_later(Signal(send.clone()), DROP_LATER_MIN);
            assert_eq!(
                receive.recv_timeout(std::time::Duration::from_secs(10)),
                Ok(Some("memplan-drop".to_owned())),
                "a large value drops on the disposal thread"
            );
        }
    }
}
