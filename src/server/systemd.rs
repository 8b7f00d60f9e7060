//! systemd's notifications (`sd_notify(3)`), sent with the sd-notify crate: when systemd starts
//! the service with `Type=notify` it names a datagram socket in `NOTIFY_SOCKET`, and the service
//! says `READY=1` once its listeners accept, `STOPPING=1` when it starts to drain, and, with
//! `WatchdogSec=`, `WATCHDOG=1` at least every `WATCHDOG_USEC`. What is the service's own is
//! when it pings: from a thread of its own that asks the internal watchdog
//! (`observability::watchdog`) first, so that while any API worker is stalled there is no
//! ping and systemd restarts a service whose workers stopped making progress, as Kubernetes'
//! liveness probe does through `/livez`.
//!
//! Outside systemd (no `NOTIFY_SOCKET`) nothing is sent. A notification that cannot be sent is
//! logged once: the service serves whatever the manager hears.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sd_notify::NotifyState;

use crate::observability::watchdog::Watchdog;

/// How often, at most, the ping thread looks at the workers: a ping follows a recovered stall
/// within this, so only a stall close to `WatchdogSec` long restarts the service.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// Where notifications go: sd-notify's `notify` in production, a recorder in tests.
type Sink = Arc<dyn Fn(&[NotifyState]) -> io::Result<()> + Send + Sync>;

/// The service manager, and how often it expects a ping.
#[derive(Clone)]
pub struct Notifier {
    sink: Sink,
    /// `WATCHDOG_USEC`, when the manager watches this process.
    watchdog: Option<Duration>,
    /// Whether a failed send was logged already.
    warned: Arc<AtomicBool>,
}

impl Notifier {
    /// The manager named by the environment (`NOTIFY_SOCKET`, `WATCHDOG_USEC`, `WATCHDOG_PID`),
    /// or `None` when there is none.
    pub fn from_environment() -> Option<Notifier> {
        std::env::var_os("NOTIFY_SOCKET").filter(|path| !path.is_empty())?;
        // sd-notify reads WATCHDOG_PID too: the ping is meant for the process systemd named,
        // not for a child that inherited the variables.
        let watchdog = sd_notify::watchdog_enabled().filter(|interval| !interval.is_zero());
        Some(Notifier::new(Arc::new(sd_notify::notify), watchdog))
    }

    fn new(sink: Sink, watchdog: Option<Duration>) -> Notifier {
        Notifier {
            sink,
            watchdog,
            warned: Arc::new(AtomicBool::new(false)),
        }
    }

    fn send(&self, states: &[NotifyState]) {
        if let Err(error) = (self.sink)(states)
            && !self.warned.swap(true, Ordering::Relaxed)
        {
            log::warn!("the service manager's socket refused a notification: {error}");
        }
    }

    /// The listeners accept: systemd calls the service started.
    pub fn ready(&self, status: &str) {
        self.send(&[
            NotifyState::Ready,
            NotifyState::Status(status),
            NotifyState::MainPid(std::process::id()),
        ]);
    }

    /// The drain has begun: systemd calls the service stopping, whoever asked.
    pub fn stopping(&self, status: &str) {
        self.send(&[NotifyState::Stopping, NotifyState::Status(status)]);
    }

    /// How often the manager expects a ping, when it watches.
    pub fn watchdog_interval(&self) -> Option<Duration> {
        self.watchdog
    }

    /// Pings the manager every half of its watchdog interval (as `sd_watchdog_enabled(3)`
    /// advises), but only while no API worker is stalled; a stall is told in `STATUS=` once.
    /// The workers are looked at more often than that ([`LOOK_EVERY`], or a quarter of the
    /// interval), and a recovered stall is pinged at once, so a stall ends in a restart only
    /// when no ping came for the whole interval: when it lasted nearly that long. Runs on a
    /// thread of its own, which ends when `watchdog` has no other handle left.
    pub fn spawn_pings(&self, watchdog: &Watchdog) {
        let Some(interval) = self.watchdog else {
            return;
        };
        let ping_every = interval / 2;
        let look_every = (interval / 4).clamp(Duration::from_millis(5), LOOK_EVERY);
        let notifier = self.clone();
        let watched = watchdog.downgrade();
        let spawned = std::thread::Builder::new()
            .name("systemd-watchdog".to_owned())
            .spawn(move || {
                let mut silent = false;
                let mut last_ping: Option<Instant> = None;
                while let Some(watchdog) = watched.upgrade() {
                    let stalled = watchdog.stalled();
                    drop(watchdog);
                    match (stalled.first(), silent) {
                        (None, _) => {
                            if silent {
                                notifier.send(&[NotifyState::Status("serving")]);
                            }
                            if silent || last_ping.is_none_or(|at| at.elapsed() >= ping_every) {
                                notifier.send(&[NotifyState::Watchdog]);
                                last_ping = Some(Instant::now());
                            }
                            silent = false;
                        }
                        (Some(stall), false) => {
                            silent = true;
                            let status = format!("not pinging the watchdog: {stall}");
                            notifier.send(&[NotifyState::Status(&status)]);
                        }
                        (Some(_), true) => {}
                    }
                    std::thread::sleep(look_every);
                }
            });
        if let Err(error) = spawned {
            log::error!(
                "the systemd watchdog's pings cannot start, so systemd will restart the \
                 service after WatchdogSec: {error}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// A notifier whose messages arrive on a channel, each as the lines sd-notify would send.
    fn recorded(watchdog: Option<Duration>) -> (Notifier, mpsc::Receiver<String>) {
        let (sender, receiver) = mpsc::channel();
        let sender = std::sync::Mutex::new(sender);
        let sink: Sink = Arc::new(move |states| {
            let lines: Vec<String> = states.iter().map(ToString::to_string).collect();
            let _ = sender.lock().unwrap().send(lines.join("\n"));
            Ok(())
        });
        (Notifier::new(sink, watchdog), receiver)
    }

    #[test]
    fn ready_and_stopping_say_what_systemd_reads() {
        let (notifier, messages) = recorded(None);
        notifier.ready("serving");
        assert_eq!(
            messages.recv().unwrap(),
            format!("READY=1\nSTATUS=serving\nMAINPID={}", std::process::id())
        );
        notifier.stopping("draining");
        assert_eq!(messages.recv().unwrap(), "STOPPING=1\nSTATUS=draining");
    }

    #[test]
    fn a_refused_notification_is_logged_once_and_not_retried() {
        let sink: Sink = Arc::new(|_| Err(io::Error::from(io::ErrorKind::ConnectionRefused)));
        let notifier = Notifier::new(sink, None);
        notifier.ready("serving");
        notifier.stopping("draining");
        assert!(notifier.warned.load(Ordering::Relaxed));
    }

    /// Pings while the worker beats, none while it is stalled (said once in STATUS), pings
    /// again once it beats: in that order.
    #[actix_web::test]
    async fn no_ping_while_a_worker_is_stalled() {
        let watchdog = Watchdog::new(Duration::from_millis(300));
        watchdog.beat_on_this_worker();
        let (notifier, receiver) = recorded(Some(Duration::from_millis(40)));
        let reader = std::thread::spawn(move || {
            let mut messages = Vec::new();
            // Bounded: a ping every 20 ms for about 1.5 s is far fewer than this, and the
            // reading ends 3 s after the last message (longer than the stall's silence).
            for _ in 0..1000 {
                match receiver.recv_timeout(Duration::from_secs(3)) {
                    Ok(message) => {
                        messages.push(message);
                        // Enough once a ping follows the recovery.
                        if messages.len() >= 2 && messages[messages.len() - 2] == "STATUS=serving" {
                            break;
                        }
                    }
                    Err(_) => break,
                }
            }
            messages
        });
        notifier.spawn_pings(&watchdog);
        actix_web::rt::time::sleep(Duration::from_millis(200)).await;
        // Block this worker's thread past the threshold: its beat task cannot run.
        std::thread::sleep(Duration::from_millis(900));
        actix_web::rt::time::sleep(Duration::from_millis(400)).await;
        // Waits without blocking this thread, whose beat task must go on running (bounded).
        for _ in 0..200 {
            if reader.is_finished() {
                break;
            }
            actix_web::rt::time::sleep(Duration::from_millis(50)).await;
        }
        let messages = reader.join().unwrap();
        drop(watchdog);
        let stalled = messages
            .iter()
            .position(|message| message.starts_with("STATUS=not pinging the watchdog: worker 1 ("))
            .unwrap_or_else(|| panic!("no stall reported: {messages:?}"));
        let back = messages
            .iter()
            .position(|message| message == "STATUS=serving")
            .unwrap_or_else(|| panic!("no recovery reported: {messages:?}"));
        assert!(stalled >= 3, "pings before the stall: {messages:?}");
        assert!(
            messages[..stalled]
                .iter()
                .all(|message| message == "WATCHDOG=1"),
            "{messages:?}"
        );
        assert_eq!(
            back,
            stalled + 1,
            "nothing between stall and recovery: {messages:?}"
        );
        assert_eq!(
            messages.get(back + 1).map(String::as_str),
            Some("WATCHDOG=1")
        );
    }
}
